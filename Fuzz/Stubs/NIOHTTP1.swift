// Stand-in for NIOHTTP1's HTTPVersion, the one type Sources/KeyVault/API/HTTPExchange.swift names.
public struct HTTPVersion: Sendable, Hashable {
    public var major: Int
    public var minor: Int
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
}
