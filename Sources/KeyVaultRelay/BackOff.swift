/// A back-off's wait, drawn from its second half: the devices an outage or a refusal met together
/// do not all come back to the relay in the same instant. The daemon's passes while the relay is
/// unreachable and the relay client's held reads both wait this way.
package enum BackOff {
    package static func jittered(_ seconds: Double) -> Double {
        seconds * Double.random(in: 0.5...1)
    }
}
