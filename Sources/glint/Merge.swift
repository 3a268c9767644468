import ArgumentParser
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

/// `glint merge`: the tiles of a sharded still image into the image, or the frame folders of a
/// sharded animation into one folder, checked and byte for byte what a single process writes.
struct Merge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Put a sharded render together: tiles into the image, shard frame folders into one animation.",
        discussion: """
            The inputs are tile files, folders holding tiles, shard frame folders, or a folder \
            holding those (what --shard wrote). Before anything is written the tiles are checked: \
            all of one job (the same command and options, input files and glint version: a hash \
            each tile records), one device, none missing, none twice. The result is what the \
            single render writes, byte for byte, and appears whole or not at all.

            Still images: -o's extension picks the tiles: .png (8- or 16-bit, as rendered), \
            .pfm (rtow --pfm, blur of a PFM) or .pgm (fractal --counts); .ckpt joins the rtow \
            shards' --checkpoint files (the linear sums, all at one sample count: the files \
            ending in .ckpt in a folder) into the whole render's checkpoint, which --resume \
            continues. Animations: -o names the folder for frame_00000.png, ...; --video also \
            encodes them (ffmpeg).

            Backends agree within DESIGN's tolerances, not always to the bit, so tiles rendered \
            on different devices are refused unless --allow-mixed-devices says the result need \
            not equal one device's render.

            Examples (each render command once per shard, 1/4 ... 4/4, or --shard auto):
              glint fractal mandelbrot --size 7680x4320 --shard 1/4 -o t/m-{shard}.png
              glint merge t -o mandelbrot.png
              glint rtow --scene cover --shard 2/4 -o r/c-{shard}.png --pfm r/c-{shard}.pfm
              glint merge r -o cover.png
              glint merge r -o cover.pfm
              glint merge r -o cover.ckpt      (from --checkpoint r/c-{shard}.ckpt)
              glint merge zoom-1 zoom-2 zoom-3 zoom-4 -o zoom --video zoom.mp4
            """)

    @Argument(help: ArgumentHelp("Tiles, folders of tiles, shard frame folders, or a folder of those.", valueName: "input"))
    var inputs: [String]

    @Option(name: .shortAndLong, help: "The merged image (.png, .pfm or .pgm), rtow checkpoint (.ckpt), or the frame folder of an animation.")
    var output: String

    @Option(help: "Animations: also encode the frames as a video (e.g. out.mp4) by piping them to ffmpeg.")
    var video: String?

    @Flag(name: .customLong("allow-mixed-devices"), help: "Merge tiles rendered on different devices (the result may then differ from each device's render within the parity tolerance).")
    var allowMixedDevices = false

    @OptionGroup var out: OutputOptions

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give the tiles or shard folders to merge (e.g. glint merge tiles -o out.png)") }
        if let video { try checkWritable(video, option: "--video") }
    }

    /// What the inputs hold.
    struct Found {
        var tiles: [(path: String, info: TileInfo)] = []
        var frameFolders: [String] = []
    }

    func collect() throws -> Found {
        var found = Found()
        var seen = Set<String>()
        for input in inputs {
            // One path named twice (or by two spellings) counts once.
            guard seen.insert(canonicalPath(input)).inserted else { continue }
            guard FileIO.exists(input) else { throw GlintError("\(input): no such file or folder") }
            if !FileIO.isDirectory(input) {
                found.tiles.append((input, try TileFile.info(input)))
                continue
            }
            if FileIO.exists(joinPath(input, FrameShard.manifestName)) {
                found.frameFolders.append(input)
                continue
            }
            // A folder: its tiles, and its shard frame folders.
            var any = false
            for name in try FileIO.folderEntries(input) where !name.hasPrefix(".") {
                let path = joinPath(input, name)
                if FileIO.isDirectory(path) {
                    if FileIO.exists(joinPath(path, FrameShard.manifestName)) { found.frameFolders.append(path); any = true }
                } else if hasSuffix(name, ["png", "pfm", "pgm"]), let info = try TileFile.record(path) {
                    // Files without a record are passed over; a record that does not read is an error.
                    found.tiles.append((path, info)); any = true
                }
            }
            if !any { throw GlintError("\(input)/ holds no Glint tiles or shard frame folders") }
        }
        let target = canonicalPath(output)
        for (path, _) in found.tiles where canonicalPath(path) == target || canonicalPath(path + TileInfo.sidecarSuffix) == target {
            throw GlintError("-o \(output) is one of the tiles being merged: give the merged image another name")
        }
        for folder in found.frameFolders where canonicalPath(folder) == target {
            throw GlintError("-o \(output) is one of the shard folders being merged: give the merged animation another folder")
        }
        if !found.tiles.isEmpty && !found.frameFolders.isEmpty {
            throw GlintError("the inputs mix still-image tiles (\(found.tiles[0].path)) and animation frame folders (\(found.frameFolders[0])/): merge one render at a time")
        }
        return found
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            let start = Clock.now()
            if hasSuffix(output, ["ckpt"]) {
                try mergeCheckpoints(start: start)
                return
            }
            let found = try collect()
            if !found.frameFolders.isEmpty {
                try mergeFrames(found.frameFolders, start: start)
            } else {
                if video != nil { throw GlintError("--video goes with an animation's shard folders; these are still-image tiles") }
                try mergeTiles(found.tiles, start: start)
            }
        }
    }

    // MARK: Still images

    func mergeTiles(_ found: [(path: String, info: TileInfo)], start: Double) throws {
        let formats: [TileInfo.Format]
        if hasSuffix(output, ["png"]) { formats = [.png8, .png16] } else if hasSuffix(output, ["pfm"]) { formats = [.pfm] } else if hasSuffix(output, ["pgm"]) {
            formats = [.pgm16]
        } else {
            throw GlintError("-o \(output): the merged image must be .png, .pfm or .pgm (an animation's shards merge into a folder)")
        }
        try checkWritable(output, option: "-o")
        let tiles = found.filter { formats.contains($0.info.format) }
        guard let first = tiles.first else { throw GlintError("no .\(formats[0].fileExtension) tiles among the inputs") }
        for t in tiles where !t.info.complete {
            throw GlintError("\(t.path) is a snapshot of a render that had not finished (--partial, or stopped): finish it (e.g. --resume its checkpoint), then merge")
        }
        let f = first.info
        for t in tiles.dropFirst() {
            let i = t.info
            if i.job != f.job {
                throw GlintError("\(t.path) belongs to another job than \(first.path) (\(i.command) job \(i.job.prefix(12)) vs \(f.command) job \(f.job.prefix(12))): tiles merge only with tiles of the same job: settings, inputs and glint build")
            }
            if i.format != f.format { throw GlintError("\(t.path) is a \(i.format.rawValue) tile, \(first.path) a \(f.format.rawValue) one") }
            if i.shard.count != f.shard.count || i.width != f.width || i.height != f.height {
                throw GlintError("\(t.path) is shard \(i.shard) of a \(i.width)x\(i.height) image, \(first.path) shard \(f.shard) of a \(f.width)x\(f.height) one")
            }
            if i.device != f.device && !allowMixedDevices {
                throw GlintError("\(t.path) was rendered on \(i.device), \(first.path) on \(f.device): backends agree within a tolerance, not to the bit; render every shard with one --device, or pass --allow-mixed-devices")
            }
            if i.compression != f.compression || i.alpha != f.alpha {
                throw GlintError("\(t.path) and \(first.path) were written with different PNG settings (--png-compression \(i.compression) vs \(f.compression))")
            }
        }
        // Every band once, where --shard puts it.
        let bands = Shard.parts(of: f.height, count: f.shard.count)
        var byShard: [Int: String] = [:]
        for t in tiles {
            if let other = byShard[t.info.shard.index] {
                throw GlintError("\(t.path) and \(other) are both shard \(t.info.shard) (rows \(rowText(t.info.band))): overlapping tiles; keep one")
            }
            guard t.info.band == bands[t.info.shard.index - 1] else {
                throw GlintError("\(t.path): shard \(t.info.shard) claims rows \(rowText(t.info.band)), not its band \(rowText(bands[t.info.shard.index - 1]))")
            }
            byShard[t.info.shard.index] = t.path
        }
        let missing = (1...f.shard.count).filter { byShard[$0] == nil }
        if !missing.isEmpty {
            let list = missing.prefix(8).map { "\($0)/\(f.shard.count) (rows \(rowText(bands[$0 - 1])))" }.joined(separator: ", ")
            throw GlintError("missing tile\(missing.count == 1 ? "" : "s"): shard \(list)\(missing.count > 8 ? " and \(missing.count - 8) more" : ""); render \(missing.count == 1 ? "it with --shard \(missing[0])/\(f.shard.count)" : "them with --shard I/\(f.shard.count)") (or resubmit the array with --skip-existing)")
        }
        let ordered = (1...f.shard.count).map { byShard[$0]! }
        for t in tiles { try TileFile.checkPixels(t.path, t.info) }
        let (w, h) = (f.width, f.height)
        let bytes: [UInt8]
        switch f.format {
        case .png8:
            let pixels = try stack(ordered, bands, width: w, perPixel: 4) { path in
                let tile = try PNG.read(path)
                return (tile.width, tile.height, tile.pixels)
            }
            let text = try pngText(ordered)
            PNG.compression = PNG.Compression(rawValue: f.compression) ?? .auto
            bytes = try PNG.encode(Image8(width: w, height: h, pixels: pixels), alpha: f.alpha, text: text)
        case .png16:
            let samples = try stack(ordered, bands, width: w, perPixel: 4) { path in
                let tile = try PNG.decode16(try FileIO.read(path, limit: PNG.maxFileBytes), name: path)
                return (tile.width, tile.height, tile.rgba16)
            }
            let text = try pngText(ordered)
            PNG.compression = PNG.Compression(rawValue: f.compression) ?? .auto
            bytes = try PNG.encode16(width: w, height: h, rgba16: samples, alpha: false, text: text)
        case .pfm:
            let pixels = try stack(ordered, bands, width: w, perPixel: 4) { path in
                let tile = try PFM.read(path)
                return (tile.width, tile.height, tile.pixels)
            }
            bytes = try PFM.encode(ImageF(width: w, height: h, pixels: pixels))
        case .pgm16:
            var maxValue: Int?
            let values = try stack(ordered, bands, width: w, perPixel: 1) { path in
                let tile = try PGM.read(path)
                if let maxValue, maxValue != tile.maxValue { throw GlintError("\(path): its maximum value \(tile.maxValue) differs from \(ordered[0])'s \(maxValue)") }
                maxValue = tile.maxValue
                return (tile.width, tile.height, tile.values)
            }
            bytes = PGM.encode16(width: w, height: h, values: values, maxValue: UInt16(maxValue ?? 65535))
        }
        try FileIO.writeAtomically(output, bytes)
        if !out.quiet {
            print("merged \(ordered.count) tile\(ordered.count == 1 ? "" : "s") into \(output) (\(w)x\(h), \(f.command), job \(f.job.prefix(12)), \(fmt((Clock.now() - start) * 1000, 1)) ms)")
        }
    }

    /// The tiles' samples (`perPixel` a pixel) stacked in band order into the whole image's; each
    /// tile's size is checked against its band before it is copied.
    func stack<T: Numeric>(_ ordered: [String], _ bands: [Range<Int>], width w: Int, perPixel: Int,
                           read: (String) throws -> (width: Int, height: Int, samples: [T])) throws -> [T] {
        var out = [T](repeating: 0, count: w * (bands.last?.upperBound ?? 0) * perPixel)
        for (path, band) in zip(ordered, bands) {
            let tile = try read(path)
            try checkTileSize(path, tile.width, tile.height, w, band)
            out.replaceSubrange(band.lowerBound * w * perPixel ..< band.upperBound * w * perPixel, with: tile.samples)
        }
        return out
    }

    /// The tEXt chunks of the merged PNG: those the tiles carry for the whole image (a fractal's
    /// view), which must agree, without the tile records.
    func pngText(_ ordered: [String]) throws -> [PNG.TextEntry] {
        var text: [PNG.TextEntry]?
        for path in ordered {
            let entries = try PNG.readText(path).filter { $0.keyword != TileInfo.keyword }
            if let text, text != entries { throw GlintError("\(path) records another view than \(ordered[0]) (its tEXt chunks differ)") }
            text = entries
        }
        return text ?? []
    }

    func checkTileSize(_ path: String, _ tw: Int, _ th: Int, _ w: Int, _ band: Range<Int>) throws {
        guard tw == w, th == band.count else {
            throw GlintError("\(path) is \(tw)x\(th); its record says \(w)x\(band.count) (rows \(rowText(band))): a damaged tile, render it again")
        }
    }

    func rowText(_ r: Range<Int>) -> String { r.count == 1 ? "\(r.lowerBound)" : "\(r.lowerBound)-\(r.upperBound - 1)" }

    // MARK: rtow checkpoints

    func mergeCheckpoints(start: Double) throws {
        if video != nil { throw GlintError("--video goes with an animation's shard folders") }
        try checkWritable(output, option: "-o")
        var parts: [(name: String, sums: RTAccumulation)] = []
        var seen = Set<String>()
        let target = canonicalPath(output)
        for input in inputs {
            guard FileIO.exists(input) else { throw GlintError("\(input): no such file or folder") }
            if FileIO.isDirectory(input) {
                // A folder's shard checkpoints; a whole render's (an earlier merge's) is left alone.
                let found = try FileIO.folderEntries(input).filter { hasSuffix($0, ["ckpt"]) && !$0.hasPrefix(".") }.map { joinPath(input, $0) }
                for path in found where canonicalPath(path) != target && seen.insert(canonicalPath(path)).inserted {
                    let sums = try RTAccumulation.read(path)
                    if sums.band != nil { parts.append((path, sums)) }
                }
                if found.isEmpty { throw GlintError("\(input)/ holds no .ckpt checkpoints") }
            } else if seen.insert(canonicalPath(input)).inserted {
                if canonicalPath(input) == target { throw GlintError("-o \(output) is one of the checkpoints being merged: give the merged checkpoint another name") }
                parts.append((input, try RTAccumulation.read(input)))
            }
        }
        let joined = try RTAccumulation.joining(parts)
        try FileIO.writeAtomically(output, joined.encode())
        if !out.quiet {
            print("merged \(parts.count) checkpoint\(parts.count == 1 ? "" : "s") into \(output) (\(joined.width)x\(joined.height), \(joined.samplesPerPixel) samples per pixel, \(fmt((Clock.now() - start) * 1000, 1)) ms)")
        }
    }

    // MARK: Animations

    func mergeFrames(_ folders: [String], start: Double) throws {
        if hasSuffix(output, ["png", "pfm", "pgm"]) {
            throw GlintError("-o \(output): an animation's shards merge into a folder of frames, not one image")
        }
        try checkFrameFolder(output, option: "-o")
        let shards = try folders.map { try FrameManifest(folder: $0) }
        let f = shards[0]
        for m in shards.dropFirst() {
            if m.job != f.job {
                throw GlintError("\(m.folder)/ belongs to another job than \(f.folder)/ (\(m.command) job \(m.job.prefix(12)) vs \(f.command) job \(f.job.prefix(12)))")
            }
            if m.shard.count != f.shard.count || m.total != f.total {
                throw GlintError("\(m.folder)/ is shard \(m.shard) of \(m.total) frames, \(f.folder)/ shard \(f.shard) of \(f.total)")
            }
            if m.device != f.device && !allowMixedDevices {
                throw GlintError("\(m.folder)/ was rendered on \(m.device), \(f.folder)/ on \(f.device): render every shard with one --device, or pass --allow-mixed-devices")
            }
        }
        let parts = Shard.parts(of: f.total, count: f.shard.count)
        var byShard: [Int: FrameManifest] = [:]
        for m in shards {
            if let other = byShard[m.shard.index] {
                throw GlintError("\(m.folder)/ and \(other.folder)/ are both shard \(m.shard) (frames \(rowText(m.frames))): overlapping shards; keep one")
            }
            guard m.frames == parts[m.shard.index - 1] else {
                throw GlintError("\(m.folder)/: shard \(m.shard) claims frames \(rowText(m.frames)), not its run \(rowText(parts[m.shard.index - 1]))")
            }
            byShard[m.shard.index] = m
        }
        let missing = (1...f.shard.count).filter { byShard[$0] == nil }
        if !missing.isEmpty {
            let list = missing.prefix(8).map { "\($0)/\(f.shard.count) (frames \(rowText(parts[$0 - 1])))" }.joined(separator: ", ")
            throw GlintError("missing shard\(missing.count == 1 ? "" : "s") \(list)\(missing.count > 8 ? " and \(missing.count - 8) more" : ""): render \(missing.count == 1 ? "it with --shard \(missing[0])/\(f.shard.count)" : "them with --shard I/\(f.shard.count)") (or resubmit the array with --skip-existing)")
        }
        for m in shards {
            for k in m.frames where !FileIO.exists(m.path(of: k)) {
                throw GlintError("\(m.path(of: k)) is missing: shard \(m.shard)'s folder is incomplete; render it again")
            }
        }
        let sink = try FrameSink(folder: output, video: video, width: f.width, height: f.height, fps: f.fps)
        let bar = ProgressBar("merge", quiet: out.quiet)
        for k in 0..<f.total {
            let m = byShard[parts.firstIndex { $0.contains(k) }! + 1]!
            let bytes = try FileIO.read(m.path(of: k), limit: PNG.maxFileBytes)
            try sink.copy(bytes, frame: k)
            bar.update(Double(k + 1) / Double(f.total))
        }
        try sink.finish()
        bar.finish()
        if !out.quiet {
            print("merged \(f.shard.count) shard\(f.shard.count == 1 ? "" : "s") into \(output)/ (\(f.total) frames, \(f.width)x\(f.height), \(f.command), job \(f.job.prefix(12)), \(fmt(Clock.now() - start, 2)) s\(video.map { "; video \($0)" } ?? ""))")
        }
    }

    /// `path` made absolute with links resolved (its folder's, when it does not exist yet).
    func canonicalPath(_ path: String) -> String {
        func real(_ p: String) -> String? {
            guard let r = realpath(p, nil) else { return nil }
            defer { free(r) }
            return String(cString: r)
        }
        if let r = real(path) { return r }
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        let slash = trimmed.lastIndex(of: "/")
        let dir = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        let name = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
        return (real(dir) ?? dir) + "/" + name
    }
}
