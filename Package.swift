// swift-tools-version:6.1
import PackageDescription

// The Swift CPU path's hot loops are SIMD code; on x86-64 they are compiled for AVX2 (Haswell,
// 2013, and every later x86-64 server), which doubles their speed. `glint` checks the CPU at
// start-up and says so clearly on an older one. Other architectures build for their baseline.
#if arch(x86_64)
let simdSettings: [SwiftSetting] = [.unsafeFlags(["-target-cpu", "haswell"])]
let simdCSettings: [CSetting] = [.unsafeFlags(["-O3", "-march=haswell"])]
#else
let simdSettings: [SwiftSetting] = []
let simdCSettings: [CSetting] = [.unsafeFlags(["-O3"])]
#endif

let package = Package(
    name: "Glint",
    products: [
        .executable(name: "glint", targets: ["glint"]),
        .library(name: "GlintWorkloads", targets: ["GlintWorkloads"]),
    ],
    // `glint serve` (a web server on Hummingbird 2 with its WebSocket package) is the default trait
    // "Serve". `--disable-default-traits` builds the tool without it, and without building SwiftNIO
    // and Hummingbird: the sanitizer lanes of .ci/run do this.
    traits: [
        .trait(name: "Serve", description: "glint serve: the interactive views in a browser (Hummingbird 2, WebSocket)."),
        .default(enabledTraits: ["Serve"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // C system libraries: the OpenCL ICD loader and libpng, from Debian's -dev packages (and
        // FFTW's libfftw3-dev for CDeepOrbit below).
        .systemLibrary(name: "COpenCL", path: "Sources/COpenCL", pkgConfig: "OpenCL",
                       providers: [.apt(["ocl-icd-opencl-dev", "opencl-headers"])]),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        // GNU MPFR (and GMP under it): the deep zoom's arbitrary-precision reference orbit.
        .systemLibrary(name: "CMPFR", path: "Sources/CMPFR", pkgConfig: "mpfr",
                       providers: [.apt(["libmpfr-dev"])]),

        // The deep zoom's reference-orbit step in C: MPFR, and above a few thousand bits one FFT
        // convolution (FFTW) per step for all its products, on two threads.
        .target(name: "CDeepOrbit", path: "Sources/CDeepOrbit", cSettings: simdCSettings,
                linkerSettings: [.linkedLibrary("fftw3"), .linkedLibrary("mpfr"), .linkedLibrary("gmp"),
                                 .linkedLibrary("pthread")]),

        // The structs shared with the kernels, defined once in Kernels/common/types.h.
        .systemLibrary(name: "CGlintTypes", path: "Sources/CGlintTypes"),

        // Typed Swift wrappers over OpenCL: every raw CL call goes through this module.
        .target(name: "GlintCL", dependencies: ["COpenCL", "GlintCore"]),

        // Images, PNG/PFM/PGM I/O, colour helpers and the Swift twin of Kernels/common/rng.h.
        .target(name: "GlintCore", dependencies: ["CPNG"]),

        // Kernels/** embedded as string constants at build time (see Plugins/EmbedKernels).
        .executableTarget(name: "EmbedKernelsTool", path: "Sources/EmbedKernelsTool"),
        .plugin(name: "EmbedKernels", capability: .buildTool(),
                dependencies: ["EmbedKernelsTool"]),
        .target(name: "GlintKernels", dependencies: ["GlintCore"], plugins: ["EmbedKernels"]),

        // The workloads: backend choice, shared compute contexts and one folder per workload.
        .target(name: "GlintWorkloads",
                dependencies: ["GlintCL", "GlintCore", "GlintKernels", "CGlintTypes", "CMPFR", "CDeepOrbit"],
                swiftSettings: simdSettings),

        // The command-line tool.
        .executableTarget(name: "glint",
                          dependencies: ["GlintWorkloads", "GlintCL", "GlintCore",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                         .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Serve"])),
                                         .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket",
                                                  condition: .when(traits: ["Serve"])),
                                         .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Serve"])),
                                         .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Serve"])),
                                         .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Serve"])),
                                         .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Serve"])),
                                         .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Serve"]))]),

        // What the test targets share: OpenCL device discovery (never a silent skip), the probe
        // kernel runner, ImageCompare-based image differences and deterministic test data.
        .target(name: "GlintTestSupport", dependencies: ["GlintWorkloads", "GlintCL", "GlintKernels", "GlintCore"],
                path: "Tests/GlintTestSupport"),

        .testTarget(name: "GlintCoreTests", dependencies: ["GlintCore", "GlintKernels", "GlintWorkloads", "GlintCL", "GlintTestSupport"]),
        .testTarget(name: "GlintCLTests", dependencies: ["GlintCL", "COpenCL", "GlintKernels", "GlintWorkloads", "CGlintTypes", "GlintCore",
                                                         "GlintTestSupport"]),
        .testTarget(name: "FractalTests", dependencies: ["GlintWorkloads", "GlintCore", "GlintCL", "CGlintTypes", "GlintTestSupport"]),
        .testTarget(name: "IsoTests", dependencies: ["GlintWorkloads", "GlintCore", "CGlintTypes", "GlintTestSupport"]),
        .testTarget(name: "PulseTests", dependencies: ["GlintWorkloads", "GlintCore", "GlintTestSupport"]),
        .testTarget(name: "RayTraceTests", dependencies: ["GlintWorkloads", "GlintCore", "GlintCL", "GlintKernels", "CGlintTypes",
                                                          "GlintTestSupport"]),
        .testTarget(name: "BlurMistTests", dependencies: ["GlintWorkloads", "GlintCore", "GlintCL", "CGlintTypes", "GlintTestSupport"]),
        .testTarget(name: "DeepZoomTests", dependencies: ["GlintWorkloads", "GlintCore", "CMPFR", "CDeepOrbit"]),
        .testTarget(name: "CLITests", dependencies: ["glint", "GlintCore", "GlintWorkloads", "GlintTestSupport"]),
        // `glint serve` in process: the application of buildApplication(context:configuration:)
        // driven through HummingbirdTesting's router client, no port and no child process. Like the
        // server's sources, built only with the Serve trait (its sources are `#if Serve`).
        .testTarget(name: "ServeTests",
                    dependencies: ["glint", "GlintCore", "GlintWorkloads",
                                   .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Serve"])),
                                   .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Serve"])),
                                   .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Serve"]))]),
    ],
    swiftLanguageModes: [.v6]
)
