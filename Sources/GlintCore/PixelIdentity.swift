/// What decides a render's output, written field by field into a `StableHash`: a job writes
/// itself (`PixelIdentifiable`), and a command adds what it decides beyond the job (a bit depth, a
/// frame count). Two renders with one identity, on one build and device, write the same bytes;
/// the shards of a farm job compare it, so tiles of different jobs never merge. Only what can
/// change a byte goes in: outputs' names, thread counts and progress never do.
public struct PixelIdentity: Sendable {
    private var hash = StableHash()

    /// `kind` names what is rendered (`glint fractal`), so two kinds of job never collide.
    public init(_ kind: String) {
        hash.update(kind)
    }

    public mutating func add(_ name: String, _ value: String) {
        hash.update(name)
        hash.update(value)
    }

    /// Numbers, flags and names under one name, in order. A Double's description is its
    /// shortest round-trip text: exact, and -0 apart from 0.
    public mutating func add(_ name: String, fields: any CustomStringConvertible...) {
        add(name, fields.map(\.description).joined(separator: " "))
    }

    /// An optional value: its presence, then the value.
    public mutating func add<T: PixelIdentifiable>(_ name: String, _ value: T?) {
        add(name, fields: value != nil)
        if let value { add(name, value) }
    }

    public mutating func add(_ name: String, _ value: some PixelIdentifiable) {
        hash.update(name)
        value.writeIdentity(into: &self)
    }

    /// Raw bytes (pixels, a file), their count first.
    public mutating func add(_ name: String, bytes: some Collection<UInt8>) {
        add(name, fields: bytes.count)
        for b in bytes { hash.update(b) }
    }

    /// 32 hex digits.
    public var hex: String { hash.hex }
}

/// A value that can say what in it decides pixels (`PixelIdentity`).
public protocol PixelIdentifiable {
    func writeIdentity(into identity: inout PixelIdentity)
}

extension PixelImage: PixelIdentifiable {
    /// The size and every channel's bytes.
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("size", fields: width, height)
        pixels.withUnsafeBytes { identity.add("pixels", bytes: $0) }
    }
}

extension Ramp: PixelIdentifiable {
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add(name, fields: from.description, to.description)
    }
}
