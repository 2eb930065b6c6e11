import Foundation

package extension URLComponents {
    /// False for a URL that names a port outside 1-65535 (or an empty or unreadable one).
    /// `URLComponents` keeps 65536 as given, and the HTTP client wraps it to port 0;
    /// `http://h:99999999999999999999` has no `port` at all and would quietly use the default.
    var portIsValid: Bool {
        guard hasPortSeparator else { return true }
        guard let port else { return false }
        return (1...65535).contains(port)
    }

    /// Whether the authority ends in `:` and a port, empty or not (a bracketed IPv6 host's colons aside).
    private var hasPortSeparator: Bool {
        guard let string, let scheme = string.range(of: "://") else { return false }
        let rest = string[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? authority
        let afterHost = hostPort.hasPrefix("[") ? hostPort.drop { $0 != "]" } : hostPort
        return afterHost.contains(":")
    }
}
