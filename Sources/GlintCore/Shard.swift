/// One task's share of a render split over N processes (`--shard I/N`): of a still image a band
/// of whole rows, of an animation a range of frames. Shards are numbered from 1.
///
/// A still image of H rows splits into N contiguous bands of H/N rows each (rounded down or up,
/// so they differ by at most one row): every pixel is computed exactly as in a single render (random
/// numbers and sample positions are keyed by pixel, never by band), so the merged bands equal it
/// byte for byte. Bands are equal in rows, not in cost: where the cost varies across the image
/// (a fractal's set, a scene's glass) give more shards than nodes and let the scheduler balance.
/// An animation of F frames splits into N contiguous ranges of F/N frames, the same way.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 1 ... count.
    public let index: Int
    public let count: Int

    /// The most shards one render splits into.
    public static let maxCount = 10_000

    public init(index: Int, count: Int) throws(GlintError) {
        guard (1...Self.maxCount).contains(count) else {
            throw GlintError("--shard I/N: N must be between 1 and \(Self.maxCount), got \(count)")
        }
        guard (1...count).contains(index) else {
            throw GlintError("--shard \(index)/\(count): I must be between 1 and \(count) (shards are numbered from 1)")
        }
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// The environment variables `auto` reads. Slurm job arrays set the first four; a Kubernetes
    /// Indexed Job sets JOB_COMPLETION_INDEX (from 0), and its manifest sets the count.
    public static let slurmTask = "SLURM_ARRAY_TASK_ID"
    public static let slurmCount = "SLURM_ARRAY_TASK_COUNT"
    public static let slurmMin = "SLURM_ARRAY_TASK_MIN"
    public static let slurmMax = "SLURM_ARRAY_TASK_MAX"
    public static let kubernetesIndex = "JOB_COMPLETION_INDEX"
    public static let countVariable = "GLINT_SHARD_COUNT"

    /// `I/N`, or `auto`: from a Slurm array task (I = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN
    /// + 1, N = SLURM_ARRAY_TASK_COUNT, else MAX - MIN + 1), else from a Kubernetes Indexed Job
    /// (I = JOB_COMPLETION_INDEX + 1, N = GLINT_SHARD_COUNT). `environment` looks a variable up.
    public static func parse(_ text: String, environment: (String) -> String? = FileIO.environment) throws(GlintError) -> Shard {
        let t = text[...].trimmingCharacters()
        if t.lowercased() == "auto" { return try auto(environment) }
        let parts = t.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = wholeNumber(parts[0]), let n = wholeNumber(parts[1]) else {
            throw GlintError("--shard must be I/N (e.g. 2/4, shards numbered from 1) or auto, got \(JSON.quotedForMessage(t, limit: 40))")
        }
        return try Shard(index: i, count: n)
    }

    static func wholeNumber(_ s: Substring) -> Int? {
        let d = s.trimmingCharacters()
        guard !d.isEmpty, d.count <= 9, d.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(d)
    }

    static func auto(_ env: (String) -> String?) throws(GlintError) -> Shard {
        func number(_ name: String) throws(GlintError) -> Int? {
            guard let raw = env(name), !raw.isEmpty else { return nil }
            guard let v = wholeNumber(raw[...]) else {
                throw GlintError("--shard auto: \(name) is \(JSON.quotedForMessage(raw, limit: 40)), not a whole number")
            }
            return v
        }
        if let task = try number(slurmTask) {
            let low = try number(slurmMin) ?? 0
            guard task >= low else { throw GlintError("--shard auto: \(slurmTask) \(task) is below \(slurmMin) \(low)") }
            let count: Int
            let high = try number(slurmMax)
            if let c = try number(slurmCount) { count = c } else if let high { count = high - low + 1 } else {
                throw GlintError("--shard auto: \(slurmTask) is set but neither \(slurmCount) nor \(slurmMax) is (submit with sbatch --array)")
            }
            // Task ids must run MIN, MIN+1, ... MAX: a list or a step (--array=1,5 or 1-7:2) would
            // make I and N wrong.
            if let high, high - low + 1 != count {
                throw GlintError("--shard auto: the Slurm array is not a whole range (\(count) tasks from \(low) to \(high)): submit it as --array=1-N")
            }
            do throws(GlintError) { return try Shard(index: task - low + 1, count: count) } catch {
                throw GlintError("--shard auto: Slurm array task \(task) of \(low)...\(low + count - 1): \(error.message) (give the array a step of 1)")
            }
        }
        if let index = try number(kubernetesIndex) {
            guard let count = try number(countVariable) else {
                throw GlintError("--shard auto: \(kubernetesIndex) is set but \(countVariable) is not (set it to the Job's completions)")
            }
            do throws(GlintError) { return try Shard(index: index + 1, count: count) } catch {
                throw GlintError("--shard auto: \(kubernetesIndex) \(index) with \(countVariable) \(count): \(error.message)")
            }
        }
        throw GlintError("--shard auto: no shard in the environment: set \(slurmTask) (a Slurm job array) or \(kubernetesIndex) with \(countVariable) (a Kubernetes Indexed Job), or give --shard I/N")
    }

    /// Shard k's part (from 1) of `total` things split into `count` contiguous runs.
    static func part(_ k: Int, of total: Int, count: Int) -> Range<Int> {
        (k - 1) * total / count ..< k * total / count
    }

    /// This shard's band of an image of `height` rows; an error when there are fewer rows than shards.
    public func rows(of height: Int) throws(GlintError) -> Range<Int> {
        guard count <= height else {
            throw GlintError("--shard \(self): an image of \(height) rows splits into at most \(height) shards")
        }
        return Self.part(index, of: height, count: count)
    }

    /// This shard's frames of an animation of `frames`; an error when there are fewer frames than shards.
    public func frames(of frames: Int) throws(GlintError) -> Range<Int> {
        guard count <= frames else {
            throw GlintError("--shard \(self): an animation of \(frames) frames splits into at most \(frames) shards")
        }
        return Self.part(index, of: frames, count: count)
    }

    /// Every shard's part of `total`, in order (for checking a merge).
    public static func parts(of total: Int, count: Int) -> [Range<Int>] {
        (1...count).map { part($0, of: total, count: count) }
    }
}

/// What a tile (one shard's band of a still image) records for a merge: the job it belongs to, the
/// full image and where the band lies in it, the device that rendered it and how to write the
/// merged file exactly as a single render would. PNG tiles carry it as a tEXt chunk
/// (`keyword`); PFM and PGM tiles in a file beside them named `<tile>.glint-tile`.
public struct TileInfo: Sendable, Equatable {
    public static let keyword = "glint-tile"
    public static let sidecarSuffix = ".glint-tile"

    /// What the tile file holds.
    public enum Format: String, Sendable, CaseIterable {
        case png8, png16, pfm, pgm16
        /// The file extension merged files of this format take.
        public var fileExtension: String {
            switch self {
            case .png8, .png16: "png"
            case .pfm: "pfm"
            case .pgm16: "pgm"
            }
        }
    }

    /// A hash of everything that changes the pixels (a `PixelIdentity`).
    public var job: String
    public var shard: Shard
    public var width: Int
    public var height: Int
    /// The band: rows y ..< y + rows, the full width.
    public var y: Int
    public var rows: Int
    public var format: Format
    /// The backend label (`cpu`, `opencl:0 (...)`): backends agree within a tolerance, not
    /// always to the bit, so a merge refuses tiles from different ones unless told otherwise.
    public var device: String
    /// Whether a PNG carries an alpha channel, and its compression mode (`auto` decides by the
    /// full image's size, as a single render does).
    public var alpha: Bool
    public var compression: String
    /// The command that made it (for messages), e.g. "glint fractal".
    public var command: String
    /// False for a snapshot of a render that had not finished (rtow's --partial, a stopped
    /// render): a merge and --skip-existing take complete tiles only.
    public var complete: Bool
    /// A hash of the tile's pixels as stored (a PNG's image data, `PNG.imageDataHash`; a PFM's or
    /// PGM's whole file), so that a record moved to another tile is caught by a merge.
    public var pixels: String

    public init(job: String, shard: Shard, width: Int, height: Int, y: Int, rows: Int, format: Format,
                device: String, alpha: Bool, compression: String, command: String, complete: Bool = true, pixels: String = "") {
        self.job = job
        self.shard = shard
        self.width = width
        self.height = height
        self.y = y
        self.rows = rows
        self.format = format
        self.device = device
        self.alpha = alpha
        self.compression = compression
        self.command = command
        self.complete = complete
        self.pixels = pixels
    }

    public var json: JSON {
        .object([
            ("glint_tile", .int(1)), ("command", .string(command)), ("job", .string(job)),
            ("shard", .int(Int64(shard.index))), ("shards", .int(Int64(shard.count))),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))),
            ("y", .int(Int64(y))), ("rows", .int(Int64(rows))),
            ("format", .string(format.rawValue)), ("alpha", .bool(alpha)), ("compression", .string(compression)),
            ("device", .string(device)), ("complete", .bool(complete)), ("pixels", .string(pixels)),
        ])
    }

    public var text: String { json.serialized(pretty: false) }

    /// Reads the record; `name` (the tile's path) is used in messages.
    public init(parsing text: String, name: String) throws(GlintError) {
        let bad = { (what: String) in GlintError("\(name): not a Glint tile (\(what))") }
        let j: JSON
        do throws(GlintError) { j = try JSON.parse(text) } catch { throw bad("its tile record is not JSON") }
        func int(_ key: String) throws(GlintError) -> Int {
            guard let v = j[key]?.intValue, v >= 0, v <= Int64(Int32.max) else { throw bad("no \(key)") }
            return Int(v)
        }
        func string(_ key: String) throws(GlintError) -> String {
            guard let v = j[key]?.stringValue else { throw bad("no \(key)") }
            return v
        }
        guard try int("glint_tile") == 1 else { throw bad("a tile record of another version") }
        job = try string("job")
        do throws(GlintError) { shard = try Shard(index: try int("shard"), count: try int("shards")) } catch {
            throw bad("shard: \(error.message)")
        }
        width = try int("width"); height = try int("height")
        y = try int("y"); rows = try int("rows")
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch { throw bad(error.message) }
        guard rows >= 1, y + rows <= height else { throw bad("its band lies outside its image") }
        guard let f = Format(rawValue: try string("format")) else { throw bad("unknown format") }
        format = f
        guard let a = j["alpha"]?.boolValue else { throw bad("no alpha") }
        alpha = a
        compression = try string("compression")
        device = try string("device")
        command = try string("command")
        guard let c = j["complete"]?.boolValue else { throw bad("no complete") }
        complete = c
        pixels = try string("pixels")
    }

    /// The band's rows as a range of the full image.
    public var band: Range<Int> { y ..< y + rows }
}
