import Foundation
import GlintCore
import GlintWorkloads
import Testing

/// MPFR keeps caches per thread (constants such as π and log 2, a pool of integers), which only
/// that thread can free; a thread that ends with them takes the only pointers along. Every entry
/// point that fills them must release them before it returns (MPFRNumber.releaseThreadCaches).
/// Here each runs on a thread that then ends, so a missed release is a leak that the address
/// lane's LeakSanitizer reports at exit every time, not only when one of Swift's pool threads
/// happens to retire first. In the plain lane the answers are checked.
@Suite("MPFR's per-thread caches")
struct ThreadCacheTests {
    func n(_ t: String) throws -> DeepNumber { try DeepNumber(parsing: t) }

    /// Runs `body` on a thread of its own and returns once that thread has ended.
    func onEndingThread(_ body: @escaping @Sendable () -> Void) {
        let done = NSCondition()
        nonisolated(unsafe) var finished = false
        let thread = Thread {
            body()
            done.lock(); finished = true; done.signal(); done.unlock()
        }
        thread.start()
        done.lock()
        while !finished { done.wait() }
        done.unlock()
        // The thread's own exit (and its thread-local storage going) follows the signal.
        while !thread.isFinished { usleep(1000) }
    }

    @Test("the locators, the zoom ramp and decimal conversions leave no cache on a thread that ends")
    func entryPointsReleaseTheirCaches() throws {
        let results = Locked<[String]>([])
        let re = try n("-1.75"), im = try n("0"), zoom = try n("10")
        let mre = try n("0.01"), mim = try n("0.98"), mzoom = try n("20")
        let cre = try n("-0.2437"), cim = try n("1.3221"), czoom = try n("2000")
        let from = try n("1"), to = try n("1e100")
        // Each on a thread of its own: a later call's release must not hide an earlier one's miss.
        onEndingThread {
            do {
                let m = try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: zoom, digits: 30)
                results.withLock { $0.append("minibrot \(m.period) \(abs(m.orientationDegrees) < 1e-6)") }
            } catch { results.withLock { $0.append("error \(error)") } }
        }
        onEndingThread {
            do {
                let p = try MisiurewiczLocator.locate(centerRe: mre, centerIm: mim, zoom: mzoom)
                results.withLock { $0.append("misiurewicz \(p.preperiod),\(p.period) \(p.rotationDegrees.isFinite)") }
            } catch { results.withLock { $0.append("error \(error)") } }
        }
        onEndingThread {
            do {
                // Past power 2 the size takes pow, atan2 and sin_cos (MinibrotLocator.size).
                let cube = try MinibrotLocator.locate(centerRe: cre, centerIm: cim, zoom: czoom, power: 3, digits: 30)
                results.withLock { $0.append("cube \(cube.period)") }
            } catch { results.withLock { $0.append("error \(error)") } }
        }
        onEndingThread { results.withLock { $0.append("ramp " + DeepRamp.zoom(from: from, to: to, frame: 1, of: 3)) } }
        onEndingThread {
            let x = MPFRNumber(to, precision: 400)
            results.withLock { $0.append("decimal " + x.decimalString(digits: 5)) }
        }
        let got = results.withLock { $0 }
        #expect(got.count == 5, "\(got)")
        #expect(got.first == "minibrot 3 true")
        #expect(got.dropFirst().first == "misiurewicz 2,2 true")
        #expect(got.dropFirst(2).first == "cube 4")
        #expect(got.dropFirst(3).first?.hasPrefix("ramp 1") == true && got.dropFirst(3).first?.contains("e50") == true, "\(got)")
        #expect(got.last?.hasPrefix("decimal 1") == true, "\(got)")
    }
}
