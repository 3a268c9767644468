// `--shard`, `--skip-existing` and `glint merge`, black-box: N shard processes, then a merge,
// must give the single render's files byte for byte; every shard and merge error is one line.

import Foundation
import GlintCore
import Testing

@Suite("glint --shard and glint merge", .serialized)
struct ShardCLITests {
    /// Runs `args` once whole (with `full` outputs), then as `n` shards (outputs with {shard}),
    /// then merges each kind of output; returns the sandbox-relative paths of the merged files.
    func shardAndMerge(_ box: Sandbox, _ args: [String], outputs: [(option: String, ext: String)], n: Int,
                       shardDevices: [String]? = nil) throws {
        var whole = args
        for o in outputs { whole += [o.option, "whole.\(o.ext)"] }
        let r = try box.run(whole + ["-q"])
        #expect(r.status == 0, "\(r)")
        try FileManager.default.createDirectory(atPath: box.path("tiles"), withIntermediateDirectories: true)
        for i in 1...n {
            var part = args + ["--shard", "\(i)/\(n)"]
            for o in outputs { part += [o.option, "tiles/part-{shard}.\(o.ext)"] }
            if let shardDevices { part += ["--device", shardDevices[(i - 1) % shardDevices.count]] }
            let s = try box.run(part)
            #expect(s.status == 0, "\(s)")
            #expect(s.stdout.hasPrefix("wrote tiles/part-\(i).\(outputs[0].ext) (shard \(i)/\(n): rows "), "\(s)")
        }
        for o in outputs {
            let m = try box.run(["merge", "tiles", "-o", "merged.\(o.ext)"])
            #expect(m.status == 0, "\(m)")
            #expect(m.stdout.hasPrefix("merged \(n) tiles into merged.\(o.ext) ("), "\(m)")
            #expect(try box.bytes("merged.\(o.ext)") == box.bytes("whole.\(o.ext)"), "\(args) \(o.option): merged differs from the single render")
        }
    }

    @Test("fractal: 8-bit and 16-bit PNG and the counts, float, smooth, supersampled and deep")
    func fractal() throws {
        let deep = ["--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139", "--zoom", "1e30", "--iterations", "2000"]
        // The deep zoom on the Swift path only: its OpenCL program is the slowest to load, and
        // the bands are cut the same way on every backend (the other cases run on both).
        let cases: [(args: [String], devices: [String], n: Int)] = [
            (["fractal", "mandelbrot", "--size", "64x41"], ["cpu", "opencl"], 3),
            (["fractal", "julia", "--size", "50x33", "--smooth", "--ss", "2", "--bit-depth", "16"], ["cpu", "opencl"], 2),
            (["fractal", "mandelbrot", "--size", "48x30"] + deep, ["cpu"], 3),
        ]
        for c in cases {
            for device in c.devices {
                try withSandbox { box in
                    try shardAndMerge(box, c.args + ["--device", device], outputs: [("-o", "png"), ("--counts", "pgm")], n: c.n)
                }
            }
        }
    }

    @Test("rtow: PNG and PFM tiles; a shard's checkpoint resumes its band, on the other backend too")
    func rtow() throws {
        try withSandbox { box in
            let args = ["rtow", "--scene", "cover", "--size", "40x23", "--spp", "3"]
            try shardAndMerge(box, args + ["--device", "opencl"], outputs: [("-o", "png"), ("--pfm", "pfm")], n: 4)
        }
        try withSandbox { box in
            let args = ["rtow", "--scene", "ch10", "--size", "32x20", "--bit-depth", "16"]
            #expect(try box.run(args + ["--spp", "4", "-o", "whole.png", "-q"]).status == 0)
            try FileManager.default.createDirectory(atPath: box.path("t"), withIntermediateDirectories: true)
            for i in 1...2 {
                let half = try box.run(args + ["--spp", "2", "--shard", "\(i)/2", "-o", "t/p{shard}.png", "--checkpoint", "t/c{shard}.ckpt", "-q"])
                #expect(half.status == 0, "\(half)")
                let rest = try box.run(args + ["--spp", "4", "--shard", "\(i)/2", "-o", "t/p{shard}.png", "--resume", "t/c{shard}.ckpt", "--device", "opencl", "-q"])
                #expect(rest.status == 0, "\(rest)")
            }
            // A band's checkpoint belongs to its band only.
            let wrong = try box.run(args + ["--spp", "4", "--shard", "2/2", "-o", "t/x.png", "--resume", "t/c1.ckpt", "-q"])
            #expect(wrong.status == 1 && wrong.stderr.contains("checkpoint"), "\(wrong)")
            #expect(try box.run(["merge", "t", "-o", "merged.png", "-q"]).status == 0)
            #expect(try box.bytes("merged.png") == box.bytes("whole.png"))
        }
        // The shards' checkpoints join into the whole render's (the linear sums), which resumes.
        try withSandbox { box in
            let args = ["rtow", "--scene", "ch10", "--size", "30x19", "--device", "cpu"]
            #expect(try box.run(args + ["--spp", "3", "-o", "whole.png", "--checkpoint", "whole.ckpt", "-q"]).status == 0)
            try FileManager.default.createDirectory(atPath: box.path("t"), withIntermediateDirectories: true)
            for i in 1...3 {
                #expect(try box.run(args + ["--spp", "3", "--shard", "\(i)/3", "-o", "t/p{shard}.png", "--checkpoint", "t/p{shard}.ckpt", "-q"]).status == 0)
            }
            let m = try box.run(["merge", "t", "-o", "joined.ckpt"])
            #expect(m.status == 0 && m.stdout.hasPrefix("merged 3 checkpoints into joined.ckpt (30x19, 3 samples per pixel"), "\(m)")
            #expect(try box.bytes("joined.ckpt") == box.bytes("whole.ckpt"))
            #expect(try box.run(args + ["--spp", "5", "--resume", "joined.ckpt", "-o", "more.png", "-q"]).status == 0)
            #expect(try box.run(args + ["--spp", "5", "-o", "direct.png", "-q"]).status == 0)
            #expect(try box.bytes("more.png") == box.bytes("direct.png"))
            let cases: [([String], String)] = [
                (["t/p1.ckpt", "t/p3.ckpt"], "error: rows 6-11 are missing: no checkpoint holds them"),
                (["t/p1.ckpt", "copy.ckpt", "t/p2.ckpt", "t/p3.ckpt"], "overlap (rows 0-5): keep one"),
                (["whole.ckpt"], "error: whole.ckpt: the checkpoint of a whole image"),
            ]
            try box.write("copy.ckpt", try box.bytes("t/p1.ckpt"))
            for (inputs, expected) in cases {
                let r = try box.run(["merge"] + inputs + ["-o", "bad.ckpt"])
                #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains(expected) && !box.exists("bad.ckpt"), "\(inputs): \(r)")
            }
            // A path named twice counts once.
            #expect(try box.run(["merge", "t/p1.ckpt", "t/p1.ckpt", "t/p2.ckpt", "t/p3.ckpt", "-o", "twice.ckpt", "-q"]).status == 0)
            #expect(try box.bytes("twice.ckpt") == box.bytes("whole.ckpt"))
        }
    }

    @Test("blur (PNG, PFM, 16-bit PNG) and iso (RGBA), on both backends")
    func blurAndIso() throws {
        for device in ["cpu", "opencl"] {
            try withSandbox { box in
                #expect(try box.run(["fractal", "julia", "--size", "45x31", "-o", "in.png", "-q"]).status == 0)
                #expect(try box.run(["rtow", "--scene", "ch8", "--size", "30x17", "--spp", "2", "-o", "x.png", "--pfm", "in.pfm", "-q"]).status == 0)
                try shardAndMerge(box, ["blur", "in.png", "--sigma", "2", "--device", device], outputs: [("-o", "png")], n: 3)
            }
            try withSandbox { box in
                #expect(try box.run(["rtow", "--scene", "ch8", "--size", "30x17", "--spp", "2", "-o", "x.png", "--pfm", "in.pfm", "-q"]).status == 0)
                try shardAndMerge(box, ["blur", "in.pfm", "--sigma", "6", "--method", "recursive", "--device", device], outputs: [("-o", "pfm")], n: 2)
            }
            try withSandbox { box in
                #expect(try box.run(["rtow", "--scene", "ch8", "--size", "30x17", "--spp", "2", "-o", "x.png", "--pfm", "in.pfm", "-q"]).status == 0)
                try shardAndMerge(box, ["blur", "in.pfm", "--sigma", "1.5", "--bit-depth", "16", "--device", device], outputs: [("-o", "png")], n: 3)
            }
            try withSandbox { box in
                #expect(try box.run(["fractal", "julia", "--size", "45x31", "-o", "in.png", "-q"]).status == 0)
                try shardAndMerge(box, ["iso", "in.png", "--depth", "5", "--corner-radius", "4", "--device", device], outputs: [("-o", "png")], n: 5)
            }
        }
    }

    @Test("animations: fractal, rtow, pulse and mist frame runs merge into the single render's folder")
    func animations() throws {
        let cases: [[String]] = [
            ["fractal", "julia", "--size", "24x16", "--frames", "7", "--ramp", "c=-0.8,0.156:-0.7,0.27"],
            ["rtow", "--scene", "ch8", "--size", "16x9", "--spp", "2", "--frames", "5", "--ramp", "orbit=0,0:40,0"],
            ["pulse", "--size", "8x6", "--frames", "9", "--hue", "0.2"],
            ["mist", "--input", "in.png", "--frames", "5", "--drops", "4"],
        ]
        for args in cases {
            try withSandbox { box in
                #expect(try box.run(["fractal", "julia", "--size", "24x16", "-o", "in.png", "-q"]).status == 0)
                #expect(try box.run(args + ["-o", "whole", "-q"]).status == 0)
                for i in 1...3 {
                    let r = try box.run(args + ["--shard", "\(i)/3", "-o", "part-{shard}"])
                    #expect(r.status == 0, "\(r)")
                    #expect(r.stdout.hasPrefix("wrote shard \(i)/3: frames "), "\(r)")
                }
                let m = try box.run(["merge", ".", "-o", "merged"])
                #expect(m.status == 0, "\(m)")
                let whole = try FileManager.default.contentsOfDirectory(atPath: box.path("whole")).sorted()
                let merged = try FileManager.default.contentsOfDirectory(atPath: box.path("merged")).sorted()
                #expect(merged == whole && whole.count >= 5, "\(merged) vs \(whole)")
                for name in whole { #expect(try box.bytes("merged/\(name)") == box.bytes("whole/\(name)"), "\(args[0]) \(name)") }
            }
        }
    }

    @Test("--shard auto reads Slurm array tasks and Kubernetes indexed jobs")
    func auto() throws {
        try withSandbox { box in
            let args = ["fractal", "mandelbrot", "--size", "20x12", "--shard", "auto", "-o", "p{shard}.png"]
            let envs: [([String: String?], String)] = [
                (["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"], "p3.png (shard 3/4: rows 6-8 of"),
                (["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"], "p1.png (shard 1/3: rows 0-3 of"),
                (["JOB_COMPLETION_INDEX": "1", "GLINT_SHARD_COUNT": "2"], "p2.png (shard 2/2: rows 6-11 of"),
            ]
            for (env, expected) in envs {
                let r = try box.run(args, env: env)
                #expect(r.status == 0 && r.stdout.hasPrefix("wrote \(expected)"), "\(env): \(r)")
            }
            let bad: [([String: String?], String)] = [
                ([:], "error: --shard auto: no shard in the environment"),
                (["JOB_COMPLETION_INDEX": "0"], "error: --shard auto: JOB_COMPLETION_INDEX is set but GLINT_SHARD_COUNT is not"),
                (["SLURM_ARRAY_TASK_ID": "3"], "error: --shard auto: SLURM_ARRAY_TASK_ID is set but neither"),
                (["SLURM_ARRAY_TASK_ID": "x1", "SLURM_ARRAY_TASK_COUNT": "2"], "error: --shard auto: SLURM_ARRAY_TASK_ID is \"x1\", not a whole number"),
                (["JOB_COMPLETION_INDEX": "4", "GLINT_SHARD_COUNT": "4"], "error: --shard auto: JOB_COMPLETION_INDEX 4 with GLINT_SHARD_COUNT 4"),
                (["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_MAX": "7"],
                 "error: --shard auto: the Slurm array is not a whole range (2 tasks from 3 to 7)"),
            ]
            for (env, expected) in bad {
                let r = try box.run(args, env: env)
                #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.hasPrefix(expected), "\(env): \(r)")
            }
        }
    }

    @Test("--skip-existing skips a shard whose tile is this job's, and renders one that is missing or foreign")
    func skipExisting() throws {
        try withSandbox { box in
            let args = ["fractal", "mandelbrot", "--size", "30x20", "--shard", "2/3", "-o", "p.png", "--skip-existing"]
            let first = try box.run(args)
            #expect(first.status == 0 && first.stdout.hasPrefix("wrote p.png"), "\(first)")
            let again = try box.run(args)
            #expect(again.status == 0 && again.stdout == "skipped shard 2/3: p.png is already this job's tile\n", "\(again)")
            // Another job (other iterations), another shard, or a file that is no tile: rendered.
            for other in [["--iterations", "50"], ["--shard", "1/3"]] {
                var a = args
                a += other
                let r = try box.run(a)
                #expect(r.status == 0 && r.stdout.hasPrefix("wrote p.png"), "\(other): \(r)")
            }
            #expect(try box.run(["fractal", "mandelbrot", "--size", "30x20", "-o", "p.png", "-q"]).status == 0)
            let r = try box.run(args)
            #expect(r.status == 0 && r.stdout.hasPrefix("wrote p.png"), "\(r)")
            // Frame folders too.
            let anim = ["pulse", "--size", "8x6", "--frames", "4", "--shard", "1/2", "-o", "f", "--skip-existing"]
            #expect(try box.run(anim).stdout.hasPrefix("wrote shard 1/2"))
            #expect(try box.run(anim).stdout.hasPrefix("skipped shard 1/2"))
        }
    }

    @Test("merge refuses missing, foreign, overlapping and mixed-device tiles in one line, writing nothing")
    func mergeErrors() throws {
        try withSandbox { box in
            try FileManager.default.createDirectory(atPath: box.path("t"), withIntermediateDirectories: true)
            let args = ["fractal", "mandelbrot", "--size", "30x20", "-q"]
            for i in [1, 2, 4] { #expect(try box.run(args + ["--shard", "\(i)/4", "-o", "t/p\(i).png", "--device", "cpu"]).status == 0) }
            #expect(try box.run(args + ["--shard", "3/4", "-o", "other.png", "--iterations", "60"]).status == 0)
            #expect(try box.run(args + ["--shard", "2/4", "-o", "again.png", "--device", "cpu"]).status == 0)
            #expect(try box.run(args + ["--shard", "3/4", "-o", "gpu.png", "--device", "opencl"]).status == 0)
            #expect(try box.run(args + ["-o", "plain.png"]).status == 0)
            let cases: [([String], String)] = [
                (["t"], "error: missing tile: shard 3/4 (rows 10-14); render it with --shard 3/4"),
                (["t", "other.png"], "error: other.png belongs to another job than t/p1.png"),
                (["t", "again.png"], "error: again.png and t/p2.png are both shard 2/4 (rows 5-9): overlapping tiles"),
                (["t", "gpu.png"], "error: gpu.png was rendered on opencl"),
                (["t", "plain.png"], "error: plain.png: not a Glint tile (no glint-tile record"),
                (["nowhere"], "error: nowhere: no such file or folder"),
            ]
            for (inputs, expected) in cases {
                let before = box.listing()
                let r = try box.run(["merge"] + inputs + ["-o", "out.png"])
                #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.hasPrefix(expected), "\(inputs): \(r)")
                #expect(box.listing() == before)
            }
            let mixed = try box.run(["merge", "t", "gpu.png", "-o", "out.png", "--allow-mixed-devices", "-q"])
            #expect(mixed.status == 0, "\(mixed)")
        }
    }

    /// Tile records vouch for their pixels: two equal-sized tiles whose records are swapped (PNG
    /// text chunks, and PGM sidecar records) are refused by merge in one line, not merged into a
    /// wrong image.
    @Test("merge refuses a tile whose record is another tile's")
    func swappedRecords() throws {
        try withSandbox { box in
            let args = ["fractal", "mandelbrot", "--size", "32x16", "--device", "cpu", "-q"]
            for folder in ["p", "c", "swapped"] { try FileIO.makeDirectories(box.path(folder)) }
            for i in 1...2 {
                let r = try box.run(args + ["--shard", "\(i)/2", "-o", "p/t\(i).png", "--counts", "c/t\(i).pgm"])
                try #require(r.status == 0, "\(r)")
            }
            #expect(try box.run(["merge", "p", "-o", "fine.png", "-q"]).status == 0)
            // The PNGs: each tile's pixels with the other's record.
            let images = try (1...2).map { try PNG.read(box.path("p/t\($0).png")) }
            let records = try (1...2).map { i in try #require(PNG.readText(box.path("p/t\(i).png")).first { $0.keyword == "glint-tile" }) }
            for (i, j) in [(0, 1), (1, 0)] {
                try box.write("swapped/t\(i + 1).png", PNG.encode(images[i], alpha: false, text: [records[j]]))
            }
            let png = try box.run(["merge", "swapped", "-o", "wrong.png"])
            #expect(png.status == 1 && png.stderrLines.count == 1 && png.stderr.contains("its pixels are not the ones its tile record"), "\(png)")
            // The PGMs' sidecar records, swapped in place.
            let (a, b) = (box.path("c/t1.pgm.glint-tile"), box.path("c/t2.pgm.glint-tile"))
            let (ra, rb) = (try FileIO.read(a), try FileIO.read(b))
            try box.write("c/t1.pgm.glint-tile", rb)
            try box.write("c/t2.pgm.glint-tile", ra)
            let pgm = try box.run(["merge", "c", "-o", "wrong.pgm"])
            #expect(pgm.status == 1 && pgm.stderrLines.count == 1 && pgm.stderr.contains("its pixels are not the ones its tile record"), "\(pgm)")
            #expect(!box.exists("wrong.png") && !box.exists("wrong.pgm"))
        }
    }

    /// Two shards given one -o at once: exactly one writes its tile and the other refuses in one
    /// line, however their renders and renames interleave (the final check and the rename hold a
    /// lock on the folder).
    @Test("two shards given one -o at once: one wins, the other refuses")
    func twoShardsOneOutput() throws {
        try withSandbox { box in
            let glint = try glintBinary.get().path
            for trial in 0..<10 {
                let name = "same\(trial).png"
                let processes = try (1...2).map { k -> Process in
                    let p = Process()
                    p.executableURL = URL(fileURLWithPath: glint)
                    p.arguments = ["fractal", "mandelbrot", "--size", "64x48", "--shard", "\(k)/4", "-o", name, "--device", "cpu", "-q"]
                    p.environment = box.childEnvironment()
                    p.currentDirectoryURL = box.work
                    p.standardInput = FileHandle.nullDevice
                    p.standardOutput = FileHandle.nullDevice
                    try box.write("err\(trial)-\(k)", [])
                    p.standardError = FileHandle(forWritingAtPath: box.path("err\(trial)-\(k)"))
                    return p
                }
                for p in processes { try p.run() }
                for p in processes { p.waitUntilExit() }
                let status = processes.map { String($0.terminationStatus) }
                let errors = try (1...2).map { String(decoding: try FileIO.read(box.path("err\(trial)-\($0)")), as: UTF8.self) }
                #expect(status.sorted() == ["0", "1"], "trial \(trial): exits \(status), \(errors)")
                let loser = errors[status[0] == "0" ? 1 : 0]
                #expect(loser.contains("holds shard") && loser.split(separator: "\n").count == 1, "trial \(trial): \(loser)")
                let winner = status[0] == "0" ? 1 : 2
                let record = try PNG.readText(box.path(name)).first { $0.keyword == "glint-tile" }
                #expect(record?.text.contains("\"shard\":\(winner),") == true, "trial \(trial): \(String(describing: record))")
            }
        }
    }

    @Test("the job is the typed job: the same however the command line spells it, in any folder, with any thread count")
    func jobSpelling() throws {
        try withSandbox { box in
            // The tiles' folder is named like the formula; -qo; --zoom=1 against --zoom 1; options
            // in another order; the view read from the single render's PNG; --no-skip changes no
            // pixel; the Swift path with 1 and 2 threads.
            try FileManager.default.createDirectory(atPath: box.path("mandelbrot"), withIntermediateDirectories: true)
            let base = ["fractal", "mandelbrot", "--size", "30x20", "--device", "cpu"]
            #expect(try box.run(base + ["--zoom", "1", "--iterations", "90", "-o", "whole.png", "-q"]).status == 0)
            let shards: [([String], [String: String?])] = [
                (base + ["--zoom", "1", "--iterations", "90", "--shard", "1/3", "-qo", "mandelbrot/p1.png"], ["GLINT_THREADS": "1"]),
                (["fractal", "--iterations=90", "--zoom=1", "mandelbrot", "--device", "cpu", "--size", "30x20", "--shard", "2/3",
                  "-o", "mandelbrot/p2.png", "-q", "--no-skip"], ["GLINT_THREADS": "2"]),
                (["fractal", "--location", "whole.png", "--shard=3/3", "--output=mandelbrot/p3.png", "-q"], [:]),
            ]
            for (args, env) in shards {
                let r = try box.run(args, env: env)
                #expect(r.status == 0, "\(args): \(r)")
            }
            let m = try box.run(["merge", "mandelbrot", "-o", "merged.png", "-q"])
            #expect(m.status == 0, "\(m)")
            #expect(try box.bytes("merged.png") == box.bytes("whole.png"))
            // What decides the output makes another job: a 16-bit PNG of the same view, or the
            // same zoom spelled otherwise (the PNG's view record keeps the digits as typed).
            #expect(try box.run(base + ["--zoom", "1", "--iterations", "90", "--bit-depth", "16", "--shard", "3/3", "-o", "deep.png", "-q"]).status == 0)
            #expect(try box.run(base + ["--zoom", "1.0", "--iterations", "90", "--shard", "3/3", "-o", "spelled.png", "-q"]).status == 0)
            for other in ["deep.png", "spelled.png"] {
                let r = try box.run(["merge", "mandelbrot/p1.png", "mandelbrot/p2.png", other, "-o", "x.png"])
                #expect(r.status == 1 && r.stderr.hasPrefix("error: \(other) belongs to another job than mandelbrot/p1.png"), "\(r)")
            }
            // Two shards given one output: the second refuses to write over the first.
            #expect(try box.run(base + ["--shard", "1/2", "-o", "same.png", "-q"]).status == 0)
            let clash = try box.run(base + ["--shard", "2/2", "-o", "same.png"])
            #expect(clash.status == 1 && clash.stderr.hasPrefix("error: same.png holds shard 1/2 of this job: give each shard its own output"), "\(clash)")
            // A merge never writes over what it reads; a path named twice counts once.
            let over = try box.run(["merge", "mandelbrot", "-o", "mandelbrot/p1.png"])
            #expect(over.status == 1 && over.stderr.hasPrefix("error: -o mandelbrot/p1.png is one of the tiles being merged"), "\(over)")
            let twice = try box.run(["merge", "mandelbrot", "mandelbrot/", "-o", "again.png", "-q"])
            #expect(twice.status == 0, "\(twice)")
            // A tile whose record is damaged is named as such, not reported missing.
            let pfmArgs = ["rtow", "--scene", "ch8", "--size", "12x9", "--spp", "1", "--device", "cpu", "-q"]
            try FileManager.default.createDirectory(atPath: box.path("r"), withIntermediateDirectories: true)
            for i in 1...2 { #expect(try box.run(pfmArgs + ["--shard", "\(i)/2", "-o", "r/p\(i).png", "--pfm", "r/p\(i).pfm"]).status == 0) }
            try box.write("r/p2.pfm.glint-tile", Array("{\"glint_tile\":1,\"width\":2000000000}".utf8))
            let damaged = try box.run(["merge", "r", "-o", "m.pfm"])
            #expect(damaged.status == 1 && damaged.stderr.hasPrefix("error: r/p2.pfm: not a Glint tile"), "\(damaged)")
        }
    }

    @Test("bad --shard values and combinations are usage errors", arguments: [
        (["fractal", "julia", "--shard", "0/4"], "error: --shard 0/4: I must be between 1 and 4"),
        (["fractal", "julia", "--shard", "5/4"], "error: --shard 5/4: I must be between 1 and 4"),
        (["fractal", "julia", "--shard", "1/0"], "error: --shard I/N: N must be between 1 and 10000"),
        (["fractal", "julia", "--shard", "1-4"], "error: --shard must be I/N"),
        (["fractal", "julia", "--shard", "1/99999"], "error: --shard I/N: N must be between 1 and 10000"),
        (["fractal", "julia", "--size", "10x3", "--shard", "1/4"], "error: --shard 1/4: an image of 3 rows splits into at most 3 shards"),
        (["pulse", "--frames", "2", "--shard", "1/3"], "error: --shard 1/3: an animation of 2 frames splits into at most 2 shards"),
        (["fractal", "julia", "--skip-existing"], "error: --skip-existing goes with --shard"),
        (["fractal", "julia", "--shard", "1/2", "--then", "blur", "--sigma", "2"], "error: --shard renders a band of the image"),
        (["fractal", "julia", "--frames", "4", "--shard", "1/2", "--video", "v.mp4"], "error: --video with --shard"),
        (["fractal", "julia", "--counts", "c-{shard}.pgm"], "error: c-{shard}.pgm: {shard} in an output name goes with --shard I/N"),
    ] as [([String], String)])
    func badShard(args: [String], expected: String) throws {
        try withSandbox { box in
            let r = try box.run([args[0], "-o", "x.png"] + Array(args.dropFirst()))
            #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.hasPrefix(expected), "\(r)")
            #expect(box.listing().isEmpty)
        }
    }
}
