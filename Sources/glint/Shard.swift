import ArgumentParser
import GlintCore
import GlintKernels
import GlintWorkloads
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

    /// Refuses `{shard}` in an output path without --shard.
    func checkPaths(_ paths: [String?]) throws {
        guard shard == nil else { return }
        if let p = paths.compactMap({ $0 }).first(where: { $0.contains("{shard}") }) {
            throw ValidationError("\(p): {shard} in an output name goes with --shard I/N")
        }
    }

    /// The checks of a render that may be a still or an animation (`frames`) of `height` rows:
    /// enough rows or frames for the shards, no --then passes, no video.
    func check(height: Int, frames: Int?, video: String?) throws {
        guard let shard = try resolved() else { return }
        do throws(GlintError) {
            if let frames { _ = try shard.frames(of: frames) } else { _ = try shard.rows(of: height) }
        } catch { throw ValidationError(error.message) }
        if !Chain.passes.isEmpty { throw ValidationError("--shard renders a band of the image; --then passes need all of it (merge, then run the passes on the result)") }
        if video != nil { throw ValidationError("--video with --shard: each shard writes its frames; encode the video with glint merge --video") }
    }

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
    return path.replacing("{shard}", with: String(shard.index))
}

/// `name` inside the folder `dir`.
func joinPath(_ dir: String, _ name: String) -> String {
    dir.hasSuffix("/") ? dir + name : dir + "/" + name
}

/// The job a shard belongs to: the build (its version and commit: kernels change pixels), the
/// command, and what the command says decides its output (`PixelIdentity`: the typed job, the
/// input pixels, a bit depth). Shards of one job agree on it however their command lines are
/// spelled, and tiles of different jobs never merge.
/// `extent` is the image's size or the animation's frames.
func shardJob(_ command: String, extent: String, _ write: (inout PixelIdentity) throws -> Void) rethrows -> String {
    var identity = PixelIdentity("glint \(GlintBuild.version) \(GlintBuild.commit) \(command)")
    identity.add("extent", extent)
    try write(&identity)
    return identity.hex
}

extension PixelIdentity {
    /// A file's bytes, or a folder's files in name order (a camera folder): inputs that the job
    /// reads while it runs rather than holding them.
    mutating func addContents(_ name: String, of path: String) throws {
        if FileIO.isDirectory(path) {
            add(name, "folder")
            for entry in try FileIO.folderEntries(path) where !entry.hasPrefix(".") {
                let child = joinPath(path, entry)
                guard !FileIO.isDirectory(child) else { continue }
                add("entry", entry)
                try addContents(name, of: child)
            }
        } else if isRegularFile(path) {
            add(name, bytes: try FileIO.read(path))
        } else {
            // A pipe or a device has no contents to hash without consuming them: its name stands in.
            add(name, "special " + path)
        }
    }
}

/// Whether `path` is a regular file (not a folder, a pipe or a device).
func isRegularFile(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
}

/// The device a shard records: what decides its pixels. OpenCL: the device's name (not its index
/// on this machine); the Swift path: its name alone (its thread count changes no pixel).
func shardDevice(_ backend: Backend) -> String {
    backend.isOpenCL ? backend.label : "cpu (Swift)"
}

/// One shard of a still image as a command renders it: its band of rows and the records its
/// tiles carry.
struct StillShard: Sendable {
    let shard: Shard
    let job: String
    let command: String
    let width: Int, height: Int
    let rows: Range<Int>

    /// `command` as `glint fractal`; `identity` writes what decides the image (`shardJob`).
    init(_ shard: Shard, command: String, width: Int, height: Int, identity: (inout PixelIdentity) throws -> Void) throws {
        (self.shard, self.command, self.width, self.height) = (shard, command, width, height)
        rows = try shard.rows(of: height)
        job = try shardJob(command, extent: "\(width)x\(height)", identity)
    }

    func info(_ format: TileInfo.Format, device: Backend, alpha: Bool = false, complete: Bool = true, pixels: String) -> TileInfo {
        TileInfo(job: job, shard: shard, width: width, height: height, y: rows.lowerBound, rows: rows.count,
                 format: format, device: shardDevice(device), alpha: alpha, compression: PNG.compression.rawValue,
                 command: command, complete: complete, pixels: pixels)
    }

    /// The tile PNG of `band` (this shard's rows): the chunks the whole image's PNG would carry
    /// (`text`), then the tile record. `complete` false: a snapshot of a render still running
    /// or stopped (rtow's --partial, a Ctrl-C), which neither --skip-existing nor a merge accepts.
    func png(_ band: Image8, alpha: Bool, text: [PNG.TextEntry] = [], device: Backend, complete: Bool = true) throws -> [UInt8] {
        try withRecord(PNG.encode(band, alpha: alpha, text: text), .png8, device: device, alpha: alpha, complete: complete)
    }

    /// The 16-bit tile PNG of `band` in linear light.
    func png16(linear band: ImageF, text: [PNG.TextEntry] = [], device: Backend, complete: Bool = true) throws -> [UInt8] {
        try withRecord(PNG.encode16(linear: band, alpha: false, text: text), .png16, device: device, complete: complete)
    }

    /// `png` with the tile record after its other text, vouching for its image data's hash.
    private func withRecord(_ png: [UInt8], _ format: TileInfo.Format, device: Backend, alpha: Bool = false, complete: Bool) throws -> [UInt8] {
        let record = info(format, device: device, alpha: alpha, complete: complete, pixels: try PNG.imageDataHash(png, name: "the tile"))
        return try PNG.addingText([PNG.TextEntry(keyword: TileInfo.keyword, text: record.text)], to: png)
    }

    /// Stages a PFM or PGM tile and, after it, its record beside it (`<path>.glint-tile`). A
    /// record already there goes first: until the new one is in place the file is no tile, so a
    /// run stopped between the two renames never leaves old words vouching for new pixels.
    func stage(_ bytes: [UInt8], format: TileInfo.Format, to path: String, device: Backend, complete: Bool = true,
               in outputs: OutputSet) throws {
        let record = path + TileInfo.sidecarSuffix
        if FileIO.exists(record) && unlink(record) != 0 {
            throw GlintError("cannot replace \(record): \(FileIO.errnoText())")
        }
        try outputs.stage(path, bytes)
        try outputs.stage(record, Array((info(format, device: device, complete: complete, pixels: StableHash.of(bytes: bytes)).text + "\n").utf8))
    }

    /// Before rendering to `paths` (the tile first): false when --skip-existing finds every one
    /// already a complete tile of this shard of this job (tiles appear by rename, their records
    /// after them), said unless `quiet`; an error when one holds another shard of this job (two
    /// shards given one -o).
    func claim(_ paths: [String], skipExisting: Bool, quiet: Bool) throws -> Bool {
        let found = try othersAbsent(paths)
        let done = found.allSatisfy { info in
            guard let info = info ?? nil else { return false }
            return info.job == job && info.shard == shard && info.band == rows && info.width == width && info.height == height
                && info.complete
        }
        guard skipExisting && done else { return true }
        if !quiet { print("skipped shard \(shard): \(paths[0]) is already this job's tile") }
        return false
    }

    /// The records at `paths` (nil where none), refusing one of another shard of this job.
    private func othersAbsent(_ paths: [String]) throws -> [TileInfo?] {
        let found = paths.map { try? TileFile.record($0) }
        for (path, info) in zip(paths, found) {
            guard let info = info ?? nil, info.job == job, info.shard != shard else { continue }
            throw GlintError("\(path) holds shard \(info.shard) of this job: give each shard its own output (e.g. -o tiles/part-{shard}.png)")
        }
        return found
    }

    /// Puts this shard's files in place (`write`: their commit) holding an exclusive lock on the
    /// folder of `paths[0]`, after checking again that no other shard of this job has put its
    /// tile at one of `paths` since `claim`: of two shards given one -o, exactly one wins and the
    /// other refuses in one line. The lock (flock, released when the process ends however it
    /// ends) is held only for the check and the renames.
    func place<T>(_ paths: [String], _ write: () throws -> T) throws -> T {
        let folder = folderOf(paths[0])
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw GlintError("cannot open the folder \(folder) of \(paths[0]): \(FileIO.errnoText())") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw GlintError("cannot lock the folder \(folder) of \(paths[0]): \(FileIO.errnoText())") }
        }
        _ = try othersAbsent(paths)
        return try write()
    }
}

/// Reading tiles back.
enum TileFile {
    /// The tile record of a PNG (its tEXt chunk) or of a PFM/PGM (the file beside it); nil when
    /// the file carries none, an error when it carries one that does not read.
    static func record(_ path: String) throws(GlintError) -> TileInfo? {
        if hasSuffix(path, ["png"]) {
            guard let entry = try PNG.readText(path).first(where: { $0.keyword == TileInfo.keyword }) else { return nil }
            return try TileInfo(parsing: entry.text, name: path)
        }
        let sidecar = path + TileInfo.sidecarSuffix
        guard FileIO.exists(sidecar) else { return nil }
        return try TileInfo(parsing: FileIO.readText(sidecar, limit: 1 << 16), name: path)
    }

    /// The tile record `path` must carry.
    static func info(_ path: String) throws(GlintError) -> TileInfo {
        guard let info = try record(path) else {
            let missing = hasSuffix(path, ["png"]) ? "no \(TileInfo.keyword) record" : "no \(path + TileInfo.sidecarSuffix) beside it"
            throw GlintError("\(path): not a Glint tile (\(missing): was it rendered with --shard?)")
        }
        return info
    }

    /// Checks that `path`'s pixels are the ones its record vouches for: a record copied or moved
    /// from another tile, or pixels changed since, is refused in one line.
    static func checkPixels(_ path: String, _ info: TileInfo) throws(GlintError) {
        let png = info.format == .png8 || info.format == .png16
        // A PFM tile's size is its header's (16 bytes a pixel at most): far over a PNG's bound.
        let bytes = try FileIO.read(path, limit: png ? PNG.maxFileBytes : 1 << 36)
        let hash = png ? try PNG.imageDataHash(bytes, name: path) : StableHash.of(bytes: bytes)
        guard hash == info.pixels else {
            throw GlintError("\(path): its pixels are not the ones its tile record (shard \(info.shard)) vouches for: the record of another tile, or a file changed since; render the shard again")
        }
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

    /// `command` as `glint mist`; `fps`, the rate the folder's record gives a video;
    /// `identity` writes what decides the frames (`shardJob`).
    init(_ shard: Shard, command: String, frames total: Int, fps: Double, identity: (inout PixelIdentity) throws -> Void) throws {
        (self.shard, self.command, self.total) = (shard, command, total)
        frames = try shard.frames(of: total)
        job = try shardJob(command, extent: "\(total) frames at \(fps)", identity)
    }

    /// Before rendering into `folder`: false when --skip-existing finds there this shard's record
    /// and every one of its frames, said unless `quiet`; an error when the folder holds another
    /// shard of this job (two shards given one -o).
    func claim(_ folder: String, skipExisting: Bool, quiet: Bool) throws -> Bool {
        guard let m = try? FrameManifest(folder: folder), m.job == job else { return true }
        if m.shard != shard {
            throw GlintError("\(folder)/ holds shard \(m.shard) of this job: give each shard its own folder (e.g. -o frames-{shard})")
        }
        guard skipExisting, m.frames == frames, m.total == total, frames.allSatisfy({ FileIO.exists(m.path(of: $0)) }) else { return true }
        if !quiet { print("skipped shard \(shard): \(folder)/ already holds this job's frames \(frames.lowerBound)-\(frames.upperBound - 1)") }
        return false
    }

    /// The folder's record, written after the frames.
    func manifest(device backend: Backend, width: Int, height: Int, fps: Double) -> [UInt8] {
        let device = shardDevice(backend)
        let j = JSON.object([
            ("glint_frames", .int(1)), ("command", .string(command)), ("job", .string(job)),
            ("shard", .int(Int64(shard.index))), ("shards", .int(Int64(shard.count))),
            ("frames", .int(Int64(total))), ("first", .int(Int64(frames.lowerBound))), ("count", .int(Int64(frames.count))),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))), ("fps", .number(fps)),
            ("compression", .string(PNG.compression.rawValue)), ("device", .string(device)),
        ])
        return Array((j.serialized() + "\n").utf8)
    }

}

extension FrameSink {
    /// Ends an animation's frames: a shard's record (`part`) goes in after them.
    func finish(_ part: FrameShard?, device backend: Backend, width: Int, height: Int, fps: Double) throws {
        if let part { try writeFile(FrameShard.manifestName, part.manifest(device: backend, width: width, height: height, fps: fps)) }
        try finish()
    }
}

extension RunSummary {
    /// The line of an animation's `total` frames, or a shard's run of them, written to `folder`.
    init(frames total: Int, shard part: FrameShard?, to folder: String) {
        let what = part.map { "shard \($0.shard): frames \($0.frames.lowerBound)-\($0.frames.upperBound - 1) of \(total)" } ?? "\(total) frames"
        self.init(wrote: "\(what) to \(folder)/")
    }
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
        let path = joinPath(folder, FrameShard.manifestName)
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
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch { throw bad(error.message) }
    }

    func path(of frame: Int) -> String { joinPath(folder, frameName(frame)) }
}
