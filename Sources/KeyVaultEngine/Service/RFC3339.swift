import Glibc
package import Foundation
import KeyVaultProtocol

/// RFC 3339 UTC with milliseconds, the contract's time format
/// (`2026-11-21T23:46:44.706Z`). Formatted by hand: it is on the key-read path.
package enum RFC3339 {
    package static func string(from date: Date) -> String {
        // Clamped to what a record may carry (0 … year 9999): no date, however it came, can trap here.
        let millis = Int64(Millis.of(date))
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out = [UInt8]()
        out.reserveCapacity(24)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            while divisor > 0 {
                out.append(UInt8(48 + (v / divisor) % 10))
                v %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); out.append(45)
        digits(Int(parts.tm_mon) + 1, 2); out.append(45)
        digits(Int(parts.tm_mday), 2); out.append(84)
        digits(Int(parts.tm_hour), 2); out.append(58)
        digits(Int(parts.tm_min), 2); out.append(58)
        digits(Int(parts.tm_sec), 2); out.append(46)
        digits(Int(millis % 1000), 3); out.append(90)
        return String(decoding: out, as: UTF8.self)
    }
}
