import ArgumentParser
import GlintCore
import GlintKernels
#if canImport(Glibc)
import Glibc
#endif

/// --shard and --skip-existing, shared by every command that can split its work over processes.
struct ShardOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Render only shard I of N (from 1): I/N, or auto. -o then names this shard's tile (an animation: its frame folder); {shard} in -o becomes I.",
        discussion: "A still image splits into N bands of whole rows (equal in rows, not in cost: give more shards than nodes where the cost varies), an animation into N runs of frames. auto reads a Slurm array task (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or MIN/MAX) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, from 0, with GLINT_SHARD_COUNT). Put the tiles together with glint merge: the result equals the single render byte for byte.",
        valueName: "I/N|auto"))
    var shard: String?

    @Flag(name: .customLong("skip-existing"),
          help: "With --shard: do nothing when this shard's output already exists, is complete and belongs to this job (resubmit a failed array; only missing shards work).")
    var skipExisting = false

    /// The shard, or nil without --shard; a bad value or an unset `auto` is a usage error.
    func resolved() throws -> Shard? {
        guard let shard else {
            if skipExisting { throw ValidationError("--skip-existing goes with --shard") }
            return nil
        }
        do { return try Shard.parse(shard) } catch { throw ValidationError(error.message) }
    }
}

/// `{shard}` in an output path becomes the shard's number.
func shardPath(_ path: String, _ shard: Shard?) -> String {
    guard let shard else { return path }
    return path.replacingAll("{shard}", with: String(shard.index))
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.range(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension Substring {
    func range(of target: String) -> Range<Substring.Index>? {
        let t = Array(target.utf8)
        var i = startIndex
        while i < endIndex {
            if self[i...].utf8.starts(with: t) {
                let end = self.utf8.index(i, offsetBy: t.count)
                return i ..< end
            }
            i = index(after: i)
        }
        return nil
    }
}

/// The job a shard belongs to: a hash of the command, every option that changes pixels (the
/// command line without its outputs, --shard, --device and how it reports), the contents of
/// every input file it names and the program's version. Shards of one job agree on it; tiles of
/// different jobs never merge.
enum JobKey {
    /// Options whose values name outputs or say how to report: never part of the job.
    static let valueOptions: Set<String> = [
        "-o", "--output", "--shard", "--device", "--png-compression", "--pfm", "--counts", "--checkpoint",
        "--resume", "--partial", "--video", "--max-pixels", "--repeat-runs",
    ]
    static let flags: Set<String> = ["--skip-existing", "-q", "--quiet", "-v", "--verbose"]

    /// The hash for `arguments` (the command line after `glint`).
    static func hash(_ arguments: [String]) throws -> String {
        var h = StableHash()
        h.update("glint \(GlintBuild.version) \(GlintBuild.commit)")
        var skipNext = false
        for a in arguments {
            if skipNext { skipNext = false; continue }
            let name = a.split(separator: "=", maxSplits: 1).first.map(String.init) ?? a
            if valueOptions.contains(name) {
                if !a.contains("=") { skipNext = true }
                continue
            }
            if flags.contains(a) || (a.count > 1 && a.hasPrefix("-") && !a.hasPrefix("--") && a.dropFirst().allSatisfy({ $0 == "q" || $0 == "v" })) {
                continue
            }
            // An input file (a picture, a texture, a scene, a location, wipes) counts by its contents.
            let value = a.contains("=") && a.hasPrefix("--") ? String(a.split(separator: "=", maxSplits: 1)[1]) : a
            if !value.isEmpty && !value.hasPrefix("-") && FileIO.exists(value) {
                h.update(a == value ? "" : name)
                try hashContents(value, into: &h)
            } else {
                h.update(a)
            }
        }
        return h.hex
    }

    /// A file's bytes, or a folder's files in name order (a camera folder), into `h`.
    static func hashContents(_ path: String, into h: inout StableHash) throws {
        if FileIO.isDirectory(path) {
            h.update("folder")
            for name in try folderEntries(path) where !name.hasPrefix(".") {
                let child = path.hasSuffix("/") ? path + name : path + "/" + name
                guard !FileIO.isDirectory(child) else { continue }
                h.update(name)
                try hashContents(child, into: &h)
            }
            return
        }
        // A pipe or a device has no contents to hash without consuming them: its name stands in.
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            h.update("special")
            h.update(path)
            return
        }
        h.update("file")
        for byte in try FileIO.read(path) { h.update(byte) }
    }
}

/// The names in a folder (not . and ..), sorted.
func folderEntries(_ dir: String) throws -> [String] {
    guard let d = opendir(dir) else { throw GlintError("cannot read folder \(dir): \(FileIO.errnoText())") }
    defer { closedir(d) }
    var names: [String] = []
    while let entry = readdir(d) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

/// One shard of a still image as a command renders it: its band of rows and the records its
/// tiles carry.
struct StillShard: Sendable {
    let shard: Shard
    let job: String
    let command: String
    let width: Int, height: Int
    let rows: Range<Int>

    /// `command` as `glint fractal`; the job is hashed from this process's command line.
    init(_ shard: Shard, command: String, width: Int, height: Int) throws {
        self.shard = shard
        self.command = command
        self.width = width
        self.height = height
        rows = try shard.rows(of: height)
        job = try JobKey.hash(Array(CommandLine.arguments.dropFirst()))
    }

    func info(_ format: TileInfo.Format, device: String, alpha: Bool = false) -> TileInfo {
        TileInfo(job: job, shard: shard, width: width, height: height, y: rows.lowerBound, rows: rows.count,
                 format: format, device: device, alpha: alpha, compression: PNG.compression.rawValue, command: command)
    }

    /// The tile PNG of `band` (this shard's rows): the chunks the whole image's PNG would carry
    /// (`text`), then the tile record.
    func png(_ band: Image8, alpha: Bool, text: [PNG.TextEntry] = [], device: String) throws -> [UInt8] {
        try PNG.encode(band, alpha: alpha, text: text + [entry(.png8, device: device, alpha: alpha)])
    }

    /// The 16-bit tile PNG of `band` in linear light.
    func png16(linear band: ImageF, text: [PNG.TextEntry] = [], device: String) throws -> [UInt8] {
        try PNG.encode16(linear: band, alpha: false, text: text + [entry(.png16, device: device)])
    }

    private func entry(_ format: TileInfo.Format, device: String, alpha: Bool = false) -> PNG.TextEntry {
        PNG.TextEntry(keyword: TileInfo.keyword, text: info(format, device: device, alpha: alpha).text)
    }

    /// Stages a PFM or PGM tile and, after it, its record beside it (`<path>.glint-tile`).
    func stage(_ bytes: [UInt8], format: TileInfo.Format, to path: String, device: String, in outputs: OutputSet) throws {
        try outputs.stage(path, bytes)
        try outputs.stage(path + TileInfo.sidecarSuffix, Array((info(format, device: device).text + "\n").utf8))
    }

    /// --skip-existing: whether every file in `paths` is already a tile of this shard of this
    /// job (written whole: tiles appear by rename, their records after them).
    func isDone(_ paths: [String]) -> Bool {
        paths.allSatisfy { path in
            guard let info = try? TileFile.info(path) else { return false }
            return info.job == job && info.shard == shard && info.band == rows && info.width == width && info.height == height
        }
    }

    /// The line printed for a skipped shard.
    func skippedLine(_ path: String) -> String { "skipped shard \(shard): \(path) is already this job's tile" }
}

/// Reading tiles back.
enum TileFile {
    /// The tile record of a PNG (its tEXt chunk) or of a PFM/PGM (the file beside it).
    static func info(_ path: String) throws(GlintError) -> TileInfo {
        if hasSuffix(path, ["png"]) {
            guard let entry = try PNG.readText(path).first(where: { $0.keyword == TileInfo.keyword }) else {
                throw GlintError("\(path): not a Glint tile (no \(TileInfo.keyword) record: was it rendered with --shard?)")
            }
            return try TileInfo(parsing: entry.text, name: path)
        }
        let sidecar = path + TileInfo.sidecarSuffix
        guard FileIO.exists(sidecar) else {
            throw GlintError("\(path): not a Glint tile (no \(sidecar) beside it: was it rendered with --shard?)")
        }
        return try TileInfo(parsing: FileIO.readText(sidecar, limit: 1 << 16), name: path)
    }
}

/// One shard of an animation: its run of frames and the record its folder carries.
struct FrameShard {
    static let manifestName = "glint-shard.json"

    let shard: Shard
    let job: String
    let command: String
    let total: Int
    let frames: Range<Int>

    init(_ shard: Shard, command: String, frames total: Int) throws {
        self.shard = shard
        self.command = command
        self.total = total
        frames = try shard.frames(of: total)
        job = try JobKey.hash(Array(CommandLine.arguments.dropFirst()))
    }

    /// The folder's record, written after the frames.
    func manifest(device: String, width: Int, height: Int, fps: Double) -> [UInt8] {
        let j = JSON.object([
            ("glint_frames", .int(1)), ("command", .string(command)), ("job", .string(job)),
            ("shard", .int(Int64(shard.index))), ("shards", .int(Int64(shard.count))),
            ("frames", .int(Int64(total))), ("first", .int(Int64(frames.lowerBound))), ("count", .int(Int64(frames.count))),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))), ("fps", .number(fps)),
            ("compression", .string(PNG.compression.rawValue)), ("device", .string(device)),
        ])
        return Array((j.serialized() + "\n").utf8)
    }

    /// --skip-existing: the folder holds this shard's record and every one of its frames.
    func isDone(_ folder: String) -> Bool {
        guard let m = try? FrameManifest(folder: folder) else { return false }
        return m.job == job && m.shard == shard && m.frames == frames && m.total == total
            && frames.allSatisfy { FileIO.exists(m.path(of: $0)) }
    }

    func skippedLine(_ folder: String) -> String { "skipped shard \(shard): \(folder)/ already holds this job's frames \(frames.lowerBound)-\(frames.upperBound - 1)" }
}

/// A shard frame folder's record, read back.
struct FrameManifest {
    let folder: String
    let job: String
    let command: String
    let shard: Shard
    let total: Int
    let frames: Range<Int>
    let width: Int, height: Int
    let fps: Double
    let device: String

    init(folder: String) throws(GlintError) {
        let path = (folder.hasSuffix("/") ? folder : folder + "/") + FrameShard.manifestName
        let name = "\(folder)/"
        let bad = { (what: String) in GlintError("\(name): not a Glint shard folder (\(what))") }
        guard FileIO.exists(path) else { throw bad("no \(FrameShard.manifestName): was it rendered with --shard?") }
        let j: JSON
        do throws(GlintError) { j = try JSON.parse(try FileIO.readText(path, limit: 1 << 16)) } catch { throw bad("its record is not JSON") }
        func int(_ key: String) throws(GlintError) -> Int {
            guard let v = j[key]?.intValue, v >= 0, v <= Int64(Int32.max) else { throw bad("no \(key)") }
            return Int(v)
        }
        guard try int("glint_frames") == 1 else { throw bad("a record of another version") }
        guard let job = j["job"]?.stringValue, let command = j["command"]?.stringValue, let device = j["device"]?.stringValue,
              let fps = j["fps"]?.doubleValue else { throw bad("an incomplete record") }
        self.folder = folder
        self.job = job
        self.command = command
        self.device = device
        self.fps = fps
        do throws(GlintError) { shard = try Shard(index: try int("shard"), count: try int("shards")) } catch {
            throw bad("shard: \(error.message)")
        }
        total = try int("frames")
        let first = try int("first"), count = try int("count")
        guard first + count <= total else { throw bad("its frames lie outside the animation") }
        frames = first ..< first + count
        width = try int("width"); height = try int("height")
    }

    func path(of frame: Int) -> String { (folder.hasSuffix("/") ? folder : folder + "/") + frameName(frame) }
}
