import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// A relay started with `--metrics-listen 127.0.0.1:0`, read as a scraper and a health check would.
extension RelayServiceProcess {
    /// The metrics listener's port, from the line the relay printed when it was ready.
    func metricsPort() async throws -> Int {
        let out = String(logPath.dropLast(".log".count)) + ".out"
        var port: Int?
        try await eventually {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first { $0.hasPrefix("metrics listening on ") }?.split(separator: ":").last.flatMap { Int($0) }
            return port != nil
        }
        guard let port else { throw TestFailure("no metrics listener in \(out)") }
        return port
    }

    /// `GET path` on the metrics listener: status, Content-Type and body.
    func metricsListener(_ path: String) async throws -> (status: Int, contentType: String?, text: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(try await metricsPort())\(path)"),
                                                           timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 4 << 20)
        return (Int(response.status.code), response.headers.first(name: "Content-Type"), String(buffer: body))
    }

    /// The value of exactly this series (name and labels as written) in a scrape now, if present.
    func metric(_ series: String) async throws -> Double? {
        RelayExposition.value(try await metricsListener("/metrics").text, series)
    }
}

/// The Prometheus text exposition, read line by line.
enum RelayExposition {
    /// Every sample line: the series (name and labels) and its value.
    static func samples(_ text: String) -> [(series: String, value: Double)] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
            return (String(line[..<space]), value)
        }
    }

    static func value(_ text: String, _ series: String) -> Double? {
        samples(text).first { $0.series == series }?.value
    }
}
