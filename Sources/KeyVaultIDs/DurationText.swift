/// Durations as people write them in flags and policies: `500ms`, `30s`,
/// `1.5s`, `5m`, `2h`, `90d`. At most `maxSeconds` (about 31 years): a caller turns the
/// answer into whole milliseconds, and `1e20s` in a flag trapped there.
package enum DurationText {
    package static let maxSeconds: Double = 1_000_000_000

    package static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            // "5ms" also ends in "s": the "ms" entry comes first and wins.
            guard let value = Double(number), value >= 0, value.isFinite, value * scale <= maxSeconds else { return nil }
            return value * scale
        }
        return nil
    }
}
