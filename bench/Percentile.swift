/// The bench's one percentile: the sample at rank ⌊n·p⌋ of the sorted
/// samples (the largest for p near 1), or NaN when there are none.
enum Percentile {
    static func of(_ samples: [Double], _ p: Double) -> Double {
        let sorted = samples.sorted()
        return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
