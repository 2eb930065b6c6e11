import Prometheus

/// Each metric family the relay serves, by name with its `# HELP` text: one
/// place to read what `/metrics` holds (docs/RELAY.md's table says the same).
struct RelayMetricFamily: Sendable {
    let name: String
    let help: String

    /// The registry's descriptor: the whole name as its `metricName` (no namespace or unit to join).
    var descriptor: MetricNameDescriptor { MetricNameDescriptor(metricName: name, unitName: "", helpText: help) }

    static let requests = Self(name: "keyvault_relay_requests_total",
                               help: "Requests answered, by method, route template (unmatched: no route) and status.")
    static let refusals = Self(name: "keyvault_relay_refusals_total",
                               help: "Refusals answered, by the answer's error (invalid, unsigned, identity, forbidden, …).")
    static let heldReads = Self(name: "keyvault_relay_held_reads",
                                help: "Reads held now (wait=), waiting for a record of their account.")
    static let pushLatency = Self(name: "keyvault_relay_push_latency_seconds",
                                  help: "From a change known here (publish: its commit; store: the store's wake-up arriving) to a held read woken by it.")
    static let storeLatency = Self(name: "keyvault_relay_store_latency_seconds",
                                   help: "One use of the store, by operation, failed or not.")
    static let breakerOpen = Self(name: "keyvault_relay_store_breaker_open",
                                  help: "1 while the store breaker answers unavailable at once (the store fails), 0 otherwise.")
    static let breakerTrips = Self(name: "keyvault_relay_store_breaker_trips_total",
                                   help: "Times the store breaker opened.")
    static let pruneRowsRead = Self(name: "keyvault_relay_prune_rows_read_total",
                                    help: "Rows pruning read from the store (enrollment rows and acks, never the shares it deletes).")
    static let turnWaits = Self(name: "keyvault_relay_account_turn_waits",
                                help: "Requests waiting now for a turn of their account's (one of an account's members' requests, and one of its guests', is worked on at a time).")
    static let viewEntriesApplied = Self(name: "keyvault_relay_view_entries_applied_total",
                                         help: "Log entries applied building accounts' verified views.")
    static let storeWakeups = Self(name: "keyvault_relay_store_wakeups_total",
                                   help: "Wake-ups the store sent this instance (PostgreSQL's NOTIFY, the SQLite file's doorbell): a write on any instance, this one's included.")
    static let buildInfo = Self(name: "keyvault_relay_build_info",
                                help: "This keyvault-relay's version, as a label; the value is always 1.")
    static let reloads = Self(name: "keyvault_relay_reloads_total",
                              help: "Files read again at SIGHUP, by file and outcome (reloaded, or refused with the one in force kept).")

    // The process, under the names Prometheus's client libraries give these figures.
    static let cpuSeconds = Self(name: "process_cpu_seconds_total",
                                 help: "CPU time the process has used, user and system, in seconds.")
    static let residentMemory = Self(name: "process_resident_memory_bytes",
                                     help: "The process's resident memory, in bytes.")
    static let virtualMemory = Self(name: "process_virtual_memory_bytes",
                                    help: "The process's virtual memory, in bytes.")
    static let openFiles = Self(name: "process_open_fds",
                                help: "File descriptors the process has open (connections among them).")
    static let maxFiles = Self(name: "process_max_fds",
                               help: "The most file descriptors the process may open (its RLIMIT_NOFILE).")
    static let startTime = Self(name: "process_start_time_seconds",
                                help: "When the process started, in seconds since the Unix epoch.")
}
