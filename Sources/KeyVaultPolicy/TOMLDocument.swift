/// The parsed form of a policy file: the subset of TOML 1.0 that policies use
/// (tables, arrays of tables, strings "…" and '…', integers, booleans and arrays), with the
/// line of every value kept so that a later check can point at it.
struct TOMLDocument {
    enum Value {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case array([Located])
    }

    struct Located {
        var value: Value
        var line: Int
    }

    struct Table {
        var name: String
        var line: Int
        var entries: [(key: String, value: Located)] = []

        func value(_ key: String) -> Located? { entries.first { $0.key == key }?.value }
    }

    /// Top-level keys live in a table named "".
    var tables: [Table] = []
}
