#if Serve
import Glibc
import GlintCore
import GlintWorkloads
import HTTPTypes
import Hummingbird
import NIOCore

/// POST /api/zoomvideo and its job's status, file and cancellation (docs/SERVE.md, "Zoom videos").
extension ServeRoutes {
    func addZoomVideo(to api: RouterGroup<BasicRequestContext>) {
        api.post("zoomvideo") { request, _ in try await startZoomVideo(request) }
            .get("zoomvideo/:id") { _, ctx in Self.json(try zoomVideoJob(ctx).json) }
            .get("zoomvideo/:id/file") { _, ctx in try await zoomVideoFile(ctx) }
            .delete("zoomvideo/:id") { _, ctx in
                let job = try zoomVideoJob(ctx)
                job.cancel()
                return Self.json(job.json)
            }
    }

    private func zoomVideoJob(_ ctx: BasicRequestContext) throws -> ZoomVideoJob {
        let id = ctx.parameters.get("id") ?? ""
        guard let job = context.videos.job(id) else {
            throw ServeError(status: 404, message: "no zoom video \(JSON.quotedForMessage(id, limit: 20)) (unknown, or dropped for newer ones)")
        }
        return job
    }

    /// Checks the view and the settings, then starts the video in the background: 202 and the
    /// job's status, whose `id` the page polls.
    func startZoomVideo(_ request: Request) async throws -> Response {
        let doc = try JSON.requestObject(try await body(request))
        let settings = try ZoomVideoSettings(doc, maxPixels: context.maxPixels, ffmpeg: VideoEncoder.findFFmpeg() != nil)
        let workload = try doc.optionalString("workload") ?? "fractal"
        guard workload == "fractal" else { throw ServeError.bad("a zoom video zooms into a fractal view; this job is \(JSON.printable(workload, limit: 20))") }
        // The strip's size comes from its columns and the zoom: the view's --size is the page's.
        let args = withoutSize(try doc.argList())
        let serveJob = try ServeJob(workload: "fractal", args: args, uploads: context.uploads)
        guard let fractal = serveJob.command as? Fractal else { throw ServeError.bad("a zoom video zooms into a fractal view") }
        let view: FractalJob
        do {
            try fractal.loadLocation()
            view = fractal.baseJob()
        } catch { throw ServeError.from(error, preparing: true) }
        // What a strip cannot do, said in the view's terms before the strip's own checks.
        guard view.formula == .mandelbrot else {
            throw ServeError.bad("a zoom video's strip renders mandelbrot only (got \(view.formula.name))")
        }
        guard view.supersampling == 1 else {
            throw ServeError.bad("a zoom video's strip takes one sample a pixel (got --ss \(view.supersampling)): set supersampling to 1")
        }
        guard let zoomLog2 = view.exactZoom.log2Magnitude, !view.exactZoom.isNegative, zoomLog2 > 0 else {
            throw ServeError.bad("a zoom video zooms from 1 to the view's zoom, which must be above 1 (got \(JSON.printable(view.exactZoom.plainText, limit: 30)))")
        }
        let stripView: ServeJob
        do {
            stripView = try ServeJob(workload: "fractal", args: args, uploads: context.uploads, extra: ["--exp-map", String(settings.columns)])
        } catch let e as ServeError { throw ServeError.bad(e.message.replacing("fractal: ", with: "zoom video: ")) }
        guard let stripCommand = stripView.command as? Fractal else { throw ServeError.bad("a zoom video zooms into a fractal view") }
        let strip: FractalJob
        do {
            strip = try stripCommand.makeJob()
            try strip.validate()
        } catch { throw ServeError.from(error, preparing: true) }
        // The server makes a video from one strip; a zoom deeper than one image holds takes the
        // command line's segments.
        guard try stripCommand.stripSegments(strip).count == 1 else {
            throw ServeError.tooLarge("the strip of \(settings.columns) columns to this zoom needs more rows than one image holds: fewer columns, a shallower zoom, or the command line's segments (glint fractal --exp-map)")
        }
        guard strip.width * strip.height <= context.maxPixels else {
            throw ServeError.tooLarge("the strip of \(settings.columns) columns to this zoom is \(strip.width)x\(strip.height), over the server's limit of \(context.maxPixels) pixels (--max-pixels): fewer columns or a shallower zoom")
        }
        let auto = stripCommand.autoIterations
        let device = context.deviceText(try doc.optionalString("device"))
        let devices = context.devices, stripJob = DeviceJob(stripView)
        let label = try await devices.describe(device: device, kind: strip.autoKind).label
        let videos = context.videos, gate = context.gate
        let commands = zoomVideoCommands(args: args, iterations: nil, settings: settings)
        guard let job = videos.add({ ZoomVideoJob(id: $0, settings: settings, device: label, folder: videos.folder,
                                                  iterations: auto ? 0 : strip.maxIterations, commands: commands) }) else {
            throw ServeError(status: 503, message: "the server makes \(videos.maxActive) zoom video\(videos.maxActive == 1 ? "" : "s") at once and is busy with that; wait for it or cancel it")
        }
        job.start {
            let start = Clock.now()
            do {
                let bytes = try await gate.run(timeout: videos.timeout) {
                    try await makeZoomVideo(job, strip: strip, stripJob: stripJob, autoIterations: auto, args: args,
                                            devices: devices, device: device)
                }
                job.update { s in (s.phase, s.bytes, s.wallSeconds) = (.done, bytes, Clock.now() - start) }
                // Cancelled as it finished: the file that came after the cancel goes too.
                if job.snapshot.phase == .cancelled { job.removeResult() }
                videos.prune()
            } catch {
                var e = ServeError.from(error, preparing: false)
                if e.status == 504 {
                    e.message = "the zoom video ran past the server's limit of \(Format.short(videos.timeout)) s (--video-timeout)"
                }
                let cancelled = e.status == 499
                job.update { s in (s.phase, s.error, s.wallSeconds) = (cancelled ? .cancelled : .failed, e, Clock.now() - start) }
                videos.prune()
            }
        }
        return Self.json(job.json, status: .accepted)
    }

    /// The finished video as an attachment.
    func zoomVideoFile(_ ctx: BasicRequestContext) async throws -> Response {
        let job = try zoomVideoJob(ctx)
        let state = job.snapshot
        if state.phase == .cancelled {
            throw ServeError(status: 410, message: "zoom video \(job.id) was cancelled: its file is gone")
        }
        guard state.phase == .done else {
            throw ServeError(status: 409, message: "zoom video \(job.id) is not ready: it is \(state.phase.rawValue)")
        }
        var headers = HTTPFields()
        headers[.contentType] = job.settings.contentType
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Content-Disposition")!] = "attachment; filename=\"\(job.downloadName)\""
        headers[.contentLength] = String(state.bytes)
        let body: ResponseBody
        do { body = try await Hummingbird.FileIO().loadFile(path: job.path, context: ctx) } catch {
            throw ServeError(status: 410, message: "zoom video \(job.id) is gone (cancelled or dropped for newer ones)")
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
#endif
