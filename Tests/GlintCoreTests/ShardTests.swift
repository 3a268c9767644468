// Shard arithmetic and tile records: every row (frame) in exactly one shard, the environment
// `auto` reads, and the record a merge relies on surviving a round trip.

import Foundation
import GlintCore
import Testing

@Suite("Shards and tile records")
struct ShardTests {
    @Test("N bands cover the rows once, in order, differing by at most one row",
          arguments: [(1, 1), (7, 3), (1080, 4), (1081, 4), (13, 13), (100, 7), (5, 2)])
    func bandsCoverEveryRowOnce(height: Int, count: Int) throws {
        var next = 0
        var sizes: [Int] = []
        for i in 1...count {
            let band = try Shard(index: i, count: count).rows(of: height)
            #expect(band.lowerBound == next)
            #expect(!band.isEmpty)
            next = band.upperBound
            sizes.append(band.count)
        }
        #expect(next == height)
        #expect(sizes.max()! - sizes.min()! <= 1)
        #expect(Shard.parts(of: height, count: count) == (1...count).map { try! Shard(index: $0, count: count).rows(of: height) })
    }

    @Test("I/N and auto parse; bad ones say why")
    func parsing() throws {
        #expect(try Shard.parse("2/4", environment: { _ in nil }) == Shard(index: 2, count: 4))
        #expect(try Shard.parse(" 1/1 ", environment: { _ in nil }) == Shard(index: 1, count: 1))
        let slurm = ["SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_MAX": "13"]
        #expect(try Shard.parse("auto", environment: { slurm[$0] }) == Shard(index: 3, count: 4))
        let k8s = ["JOB_COMPLETION_INDEX": "0", "GLINT_SHARD_COUNT": "8"]
        #expect(try Shard.parse("AUTO", environment: { k8s[$0] }) == Shard(index: 1, count: 8))
        for bad in ["", "2", "2/", "/4", "a/b", "-1/4", "2/4/6", "1.5/4", "0/3", "4/3", "1/10001"] {
            #expect(throws: GlintError.self, "\(bad)") { try Shard.parse(bad, environment: { _ in nil }) }
        }
        #expect(throws: GlintError.self) { try Shard.parse("auto", environment: { _ in nil }) }
        #expect(throws: GlintError.self) { try Shard(index: 1, count: 5).rows(of: 4) }
        #expect(throws: GlintError.self) { try Shard(index: 1, count: 5).frames(of: 4) }
    }

    @Test("a tile record reads back as written; a damaged one is refused")
    func tileRecord() throws {
        let info = TileInfo(job: "0123abcd", shard: try Shard(index: 2, count: 3), width: 64, height: 30, y: 10, rows: 10,
                            format: .png16, device: "opencl:0 (pthread-haswell)", alpha: false, compression: "auto", command: "glint fractal",
                            pixels: "00ff")
        let back = try TileInfo(parsing: info.text, name: "t.png")
        #expect(back == info)
        #expect(back.band == 10 ..< 20)
        for damaged in ["{}", "not json", info.text.replacingOccurrences(of: "\"rows\":10", with: "\"rows\":25"),
                        info.text.replacingOccurrences(of: "\"format\":\"png16\"", with: "\"format\":\"jpeg\""),
                        info.text.replacingOccurrences(of: ",\"pixels\":\"00ff\"", with: "")] {
            #expect(throws: GlintError.self, "\(damaged)") { try TileInfo(parsing: damaged, name: "t.png") }
        }
    }

    @Test("16-bit PNGs decode to the samples they were written from")
    func sixteenBitRoundTrip() throws {
        var samples: [UInt16] = []
        for i in 0..<(23 * 7) { samples += [UInt16(i * 397 % 65536), UInt16(i * 7919 % 65536), UInt16(65535 - i), 65535] }
        let png = try PNG.encode16(width: 23, height: 7, rgba16: samples, alpha: false)
        let back = try PNG.decode16(png, name: "x.png")
        #expect(back.width == 23 && back.height == 7)
        #expect(back.rgba16 == samples)
        #expect(try PNG.encode16(width: 23, height: 7, rgba16: back.rgba16, alpha: false) == png)
    }
}
