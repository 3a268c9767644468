// POST /api/zoomvideo in process (HummingbirdTesting's router client): a small video made in the
// background, its progress polled, its file downloaded and held against `glint fractal --exp-map`
// and `glint zoomvideo` run on the same view; the refusals; cancellation and the time limit, each
// of which must free the render slot and leave no file behind.
#if Serve
import ArgumentParser
import Foundation
import GlintCore
import GlintWorkloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import glint

@Suite(.serialized) struct ZoomVideoServeTests {
    /// A context on the CPU path (2 slots: one video at a time) in a temporary folder, its
    /// application, and the folder removed afterwards.
    func withApp(maxPixels: Int = 1 << 24, videoTimeout: Double = 600,
                 _ body: @Sendable (ServeContext, any TestClientProtocol) async throws -> Void) async throws {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-video-test")
        defer { FileIO.removeTree(folder) }
        let context = try ServeContext(device: "cpu", slots: 2, queue: 4, renderTimeout: 60, maxPixels: maxPixels,
                                       maxBody: 1 << 20, folder: folder, verbose: false, videoTimeout: videoTimeout)
        let app = buildApplication(context: context, configuration: ApplicationConfiguration(serverName: "glint"))
        try await app.test(.router) { client in try await body(context, client) }
    }

    static func body(_ args: [String], _ fields: [(String, JSON)]) -> ByteBuffer {
        let doc = JSON.object([("workload", .string("fractal")), ("args", .array(args.map { .string($0) }))] + fields)
        return ByteBuffer(string: doc.serialized(pretty: false))
    }

    static let view = ["mandelbrot", "--size", "320x200", "--center", "-0.75,0.1", "--zoom", "1e4", "--iterations", "300"]
    /// Minutes of work on the debug build's CPU path: a job that is still running when cancelled.
    static let slowView = ["mandelbrot", "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                           "--zoom", "1e12", "--iterations", "50000"]

    /// Starts a video; its id.
    static func start(_ client: any TestClientProtocol, _ args: [String], _ fields: [(String, JSON)]) async throws -> String {
        try await client.execute(uri: "/api/zoomvideo", method: .post, body: body(args, fields)) { response in
            #expect(response.status == .accepted, "\(ServeAppTests.text(response))")
            let doc = try #require(ServeAppTests.json(response))
            return try #require(doc["id"]?.stringValue)
        }
    }

    static func status(_ client: any TestClientProtocol, _ id: String) async throws -> JSON {
        try await client.execute(uri: "/api/zoomvideo/\(id)", method: .get) { response in
            #expect(response.status == .ok, "\(ServeAppTests.text(response))")
            return try #require(ServeAppTests.json(response))
        }
    }

    /// Polls until `done` says the status is what was waited for (within `seconds`); that status.
    static func poll(_ client: any TestClientProtocol, _ id: String, seconds: Double = 300,
                     until done: (JSON) -> Bool) async throws -> JSON {
        let deadline = Clock.now() + seconds
        while true {
            let s = try await status(client, id)
            if done(s) { return s }
            guard Clock.now() < deadline else {
                Issue.record("zoom video \(id): still \(s.serialized(pretty: false)) after \(seconds) s")
                return s
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func ended(_ s: JSON) -> Bool { ["done", "failed", "cancelled"].contains(s["state"]?.stringValue ?? "") }

    /// Waits for the gate to run nothing (a cancelled job frees its slot once its work stops).
    static func slotsFree(_ context: ServeContext, seconds: Double = 60) async throws -> Bool {
        let deadline = Clock.now() + seconds
        while await context.gate.load.running > 0 {
            guard Clock.now() < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The files of a tar archive, by name.
    static func untar(_ bytes: [UInt8]) throws -> [(name: String, bytes: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var at = 0
        while at + 512 <= bytes.count {
            let header = Array(bytes[at..<at + 512])
            if header.allSatisfy({ $0 == 0 }) { break }
            let name = String(decoding: header[0..<100].prefix { $0 != 0 }, as: UTF8.self)
            let sizeText = String(decoding: header[124..<136].prefix { $0 != 0 && $0 != 32 }, as: UTF8.self)
            let size = try #require(Int(sizeText, radix: 8), "size field \(sizeText)")
            #expect(String(decoding: header[257..<262], as: UTF8.self) == "ustar")
            let sum = header.enumerated().reduce(0) { $0 + Int((148..<156).contains($1.offset) ? 32 : $1.element) }
            let stored = String(decoding: header[148..<154], as: UTF8.self)
            #expect(Int(stored, radix: 8) == sum, "checksum of \(name)")
            out.append((name, Array(bytes[at + 512..<at + 512 + size])))
            at += 512 + (size + 511) / 512 * 512
        }
        return out
    }

    /// Runs a glint command in process (`glint WORKLOAD ARGS`).
    static func glint(_ words: [String]) async throws {
        var command = try Glint.parseAsRoot(words)
        if var run = command as? AsyncParsableCommand { try await run.run() } else { try command.run() }
    }

    @Test func smallVideoIsTheCommandLinesFrames() async throws {
        try await withApp { context, client in
            let id = try await Self.start(client, Self.view, [("size", .string("48x32")), ("frames", .int(4)), ("columns", .int(64)),
                                                               ("format", .string("tar")), ("device", .string("cpu"))])
            let done = try await Self.poll(client, id, until: Self.ended)
            #expect(done["state"]?.stringValue == "done", "\(done.serialized(pretty: false))")
            #expect(done["progress"]?.doubleValue == 1 && done["frame"]?.intValue == 4)
            let download = try #require(done["download"]?.stringValue)
            let archive: [UInt8] = try await client.execute(uri: download, method: .get) { response in
                #expect(response.status == .ok, "\(ServeAppTests.text(response))")
                #expect(response.headers[.contentType] == "application/x-tar")
                #expect(response.headers[HTTPField.Name("Content-Disposition")!] == "attachment; filename=\"glint-zoom-\(id).tar\"")
                return Array(response.body.readableBytesView)
            }
            #expect(Int64(archive.count) == done["bytes"]?.intValue)
            let files = try Self.untar(archive)
            #expect(files.map(\.name) == ["strip.png"] + (0..<4).map { "frames/frame_0000\($0).png" })

            // The two commands the server gives, run here: the same strip and the same frames, byte for byte.
            let commands = (done["commands"]?.arrayValue ?? []).compactMap { $0.stringValue }
            #expect(commands.count == 2)
            let work = try FileIO.makeTemporaryFolder(prefix: "glint-video-cli")
            defer { FileIO.removeTree(work) }
            var strip = commands[0].split(separator: " ").map(String.init)
            #expect(Array(strip.prefix(2)) == ["glint", "fractal"] && strip.suffix(4) == ["--exp-map", "64", "-o", "strip.png"], "\(commands[0])")
            #expect(!strip.contains("--size"), "\(commands[0])")
            strip[strip.count - 1] = work + "/strip.png"
            try await Self.glint(Array(strip.dropFirst()) + ["-q", "--device", "cpu"])
            #expect(try FileIO.read(work + "/strip.png") == files[0].bytes, "the served strip is not glint fractal --exp-map's")
            var video = commands[1].split(separator: " ").map(String.init)
            #expect(video == ["glint", "zoomvideo", "strip.png", "--size", "48x32", "--fps", "30", "--frames", "4", "-o", "frames"], "\(commands[1])")
            video[2] = work + "/strip.png"
            video[video.count - 1] = work + "/frames"
            try await Self.glint(Array(video.dropFirst()) + ["-q"])
            for k in 0..<4 {
                let cli = try FileIO.read(work + "/frames/frame_0000\(k).png")
                #expect(cli == files[k + 1].bytes, "frame \(k) differs from glint zoomvideo's")
            }
            // A finished video stays downloadable; its folder holds the result alone.
            let names = try FileManager.default.contentsOfDirectory(atPath: context.videos.folder)
            #expect(names == ["\(id).tar"], "\(names)")
        }
    }

    /// mp4 where ffmpeg is installed (its frame count and size by ffprobe, where that is too);
    /// a one-line refusal of mp4 where it is not, and auto then gives the PNG frames.
    @Test func mp4WhenFFmpegIsInstalled() async throws {
        try await withApp { context, client in
            let fields: [(String, JSON)] = [("size", .string("48x32")), ("seconds", .number(0.2)), ("fps", .int(10)), ("columns", .int(64))]
            guard VideoEncoder.findFFmpeg() != nil else {
                try await client.execute(uri: "/api/zoomvideo", method: .post, body: Self.body(Self.view, fields + [("format", .string("mp4"))])) { response in
                    ServeAppTests.expectError(response, 400, "mp4 needs ffmpeg")
                }
                let id = try await Self.start(client, Self.view, fields)
                let s = try await Self.status(client, id)
                #expect(s["format"]?.stringValue == "tar" && s["frames"]?.intValue == 2, "\(s.serialized(pretty: false))")
                _ = try await Self.poll(client, id, until: Self.ended)
                return
            }
            let id = try await Self.start(client, Self.view, fields + [("format", .string("mp4"))])
            let done = try await Self.poll(client, id, until: Self.ended)
            #expect(done["state"]?.stringValue == "done", "\(done.serialized(pretty: false))")
            let bytes: [UInt8] = try await client.execute(uri: "/api/zoomvideo/\(id)/file", method: .get) { response in
                #expect(response.headers[.contentType] == "video/mp4")
                #expect(response.headers[HTTPField.Name("Content-Disposition")!]?.hasPrefix("attachment;") == true)
                return Array(response.body.readableBytesView)
            }
            #expect(bytes.count > 8 && Array(bytes[4..<8]) == Array("ftyp".utf8))
            let work = try FileIO.makeTemporaryFolder(prefix: "glint-video-mp4")
            defer { FileIO.removeTree(work) }
            try FileIO.writeAtomically(work + "/zoom.mp4", bytes)
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
                p.arguments = ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                               "stream=width,height,nb_read_frames", "-of", "csv=p=0", work + "/zoom.mp4"]
                let pipe = Pipe()
                p.standardOutput = pipe
                try p.run()
                p.waitUntilExit()
                let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "48,32,2", "ffprobe: \(text)")
            }
        }
    }

    @Test func refusalsSayWhy() async throws {
        try await withApp(maxPixels: 1 << 18) { context, client in
            let small: [(String, JSON)] = [("size", .string("48x32")), ("frames", .int(4)), ("columns", .int(64))]
            let cases: [([String], [(String, JSON)], Int, String)] = [
                (["julia", "--zoom", "100"], small, 400, "mandelbrot only (got julia)"),
                (["mandelbrot", "--zoom", "100", "--ss", "2"], small, 400, "one sample a pixel"),
                (["mandelbrot", "--zoom", "0.5"], small, 400, "must be above 1"),
                (["mandelbrot"], small, 400, "must be above 1"),
                (["mandelbrot", "--zoom", "100", "-o", "x.png"], small, 400, "\"-o\" is not available"),
                (["mandelbrot", "--zoom", "100", "--exp-map", "64"], small, 400, "\"--exp-map\" is not available"),
                (["mandelbrot", "--zoom", "100"], [("size", .string("8x8"))], 400, "sides are 16 to 1920"),
                (["mandelbrot", "--zoom", "100"], [("size", .string("big"))], 400, "\"size\" is WxH"),
                (["mandelbrot", "--zoom", "100"], [("fps", .int(0))], 400, "\"fps\" must be a number from 1 to 60"),
                (["mandelbrot", "--zoom", "100"], [("seconds", .int(1000))], 400, "\"seconds\" must be a number from 0.1 to 120"),
                (["mandelbrot", "--zoom", "100"], [("seconds", .number(0.01))], 400, "\"seconds\" must be a number"),
                (["mandelbrot", "--zoom", "100"], [("frames", .int(3)), ("seconds", .int(1))], 400, "not both"),
                (["mandelbrot", "--zoom", "100"], [("columns", .int(10))], 400, "\"columns\" must be a number from 64 to 4096"),
                (["mandelbrot", "--zoom", "100"], [("columns", .number(100.5))], 400, "whole number"),
                (["mandelbrot", "--zoom", "100"], [("format", .string("gif"))], 400, "auto, mp4 or tar"),
                (["mandelbrot", "--zoom", "100"], [("size", .string("1920x1080"))], 413, "--max-pixels"),
                (["mandelbrot", "--zoom", "1e30"], [("size", .string("64x64")), ("columns", .int(1024))], 413, "strip of 1024 columns"),
                (["mandelbrot", "--zoom", "100"], [("device", .string("gpu9")), ("columns", .int(64))], 400, "gpu9"),
            ]
            for (args, fields, status, fragment) in cases {
                try await client.execute(uri: "/api/zoomvideo", method: .post, body: Self.body(args, fields)) { response in
                    ServeAppTests.expectError(response, status, fragment)
                }
            }
            try await client.execute(uri: "/api/zoomvideo/0123456789abcdef", method: .get) { response in
                ServeAppTests.expectError(response, 404, "no zoom video")
            }
            try await client.execute(uri: "/api/zoomvideo/nope/file", method: .get) { response in
                ServeAppTests.expectError(response, 404, "no zoom video")
            }
            #expect(await context.gate.started == 0, "a refused video took a slot")
        }
    }

    /// Cancel: the state says so at once, the slot is free once the work stops, its temporary
    /// file is gone, and the next video runs.
    @Test func cancellationFreesTheSlot() async throws {
        try await withApp { context, client in
            let id = try await Self.start(client, Self.slowView, [("size", .string("64x36")), ("frames", .int(4)), ("columns", .int(1024))])
            let running = try await Self.poll(client, id, seconds: 60) { $0["state"]?.stringValue == "strip" || Self.ended($0) }
            #expect(running["state"]?.stringValue == "strip", "\(running.serialized(pretty: false))")
            #expect(await context.gate.load.running == 1)
            // One video at a time with two slots; its file is not there yet.
            try await client.execute(uri: "/api/zoomvideo", method: .post, body: Self.body(Self.view, [("frames", .int(2))])) { response in
                ServeAppTests.expectError(response, 503, "zoom video")
            }
            try await client.execute(uri: "/api/zoomvideo/\(id)/file", method: .get) { response in
                ServeAppTests.expectError(response, 409, "not ready")
            }
            try await client.execute(uri: "/api/zoomvideo/\(id)", method: .delete) { response in
                #expect(response.status == .ok)
                #expect(ServeAppTests.json(response)?["state"]?.stringValue == "cancelled", "\(ServeAppTests.text(response))")
            }
            #expect(try await Self.slotsFree(context), "the cancelled video still holds its slot")
            #expect(try FileManager.default.contentsOfDirectory(atPath: context.videos.folder).isEmpty)
            #expect(try await Self.status(client, id)["state"]?.stringValue == "cancelled")
            // Cancelled among its frames: the partly written archive goes too.
            let long = try await Self.start(client, Self.view, [("size", .string("320x180")), ("frames", .int(3600)), ("columns", .int(64)),
                                                                 ("format", .string("tar"))])
            let framing = try await Self.poll(client, long, seconds: 120) { ($0["frame"]?.intValue ?? 0) >= 2 || Self.ended($0) }
            #expect(framing["state"]?.stringValue == "frames", "\(framing.serialized(pretty: false))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: context.videos.folder) == ["\(long).part.tar"])
            try await client.execute(uri: "/api/zoomvideo/\(long)", method: .delete) { response in
                #expect(ServeAppTests.json(response)?["state"]?.stringValue == "cancelled", "\(ServeAppTests.text(response))")
            }
            #expect(try await Self.slotsFree(context), "the video cancelled among its frames still holds its slot")
            #expect(try FileManager.default.contentsOfDirectory(atPath: context.videos.folder).isEmpty)
            let next = try await Self.start(client, Self.view, [("size", .string("32x32")), ("frames", .int(2)), ("columns", .int(64))])
            let done = try await Self.poll(client, next, until: Self.ended)
            #expect(done["state"]?.stringValue == "done", "\(done.serialized(pretty: false))")
            // Deleting a finished video drops its file.
            try await client.execute(uri: "/api/zoomvideo/\(next)", method: .delete) { response in
                #expect(ServeAppTests.json(response)?["state"]?.stringValue == "cancelled", "\(ServeAppTests.text(response))")
            }
            try await client.execute(uri: "/api/zoomvideo/\(next)/file", method: .get) { response in
                ServeAppTests.expectError(response, 410, "cancelled")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: context.videos.folder).isEmpty)
        }
    }

    /// The 8 newest finished videos are kept; the oldest goes, file and all.
    @Test func oldVideosAreDropped() async throws {
        try await withApp { context, client in
            var ids: [String] = []
            for _ in 0..<(ZoomVideos.keptCount + 1) {
                let id = try await Self.start(client, ["mandelbrot", "--zoom", "10"], [("size", .string("16x16")), ("frames", .int(2)),
                                                                                       ("columns", .int(64)), ("format", .string("tar"))])
                let s = try await Self.poll(client, id, until: Self.ended)
                #expect(s["state"]?.stringValue == "done", "\(s.serialized(pretty: false))")
                ids.append(id)
            }
            try await client.execute(uri: "/api/zoomvideo/\(ids[0])", method: .get) { response in
                ServeAppTests.expectError(response, 404, "dropped for newer ones")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: context.videos.folder).sorted()
            #expect(names == ids.dropFirst().map { "\($0).tar" }.sorted())
        }
    }

    @Test func theTimeLimitStopsAVideo() async throws {
        try await withApp(videoTimeout: 1) { context, client in
            let id = try await Self.start(client, Self.slowView, [("size", .string("64x36")), ("frames", .int(4)), ("columns", .int(1024))])
            let ended = try await Self.poll(client, id, seconds: 60, until: Self.ended)
            #expect(ended["state"]?.stringValue == "failed", "\(ended.serialized(pretty: false))")
            #expect(ended["error"]?.stringValue?.contains("past the server's limit of 1 s (--video-timeout)") == true, "\(ended.serialized(pretty: false))")
            #expect(try await Self.slotsFree(context), "the stopped video still holds its slot")
            #expect(try FileManager.default.contentsOfDirectory(atPath: context.videos.folder).isEmpty)
        }
    }
}
#endif
