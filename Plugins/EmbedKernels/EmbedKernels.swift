import Foundation
import PackagePlugin

/// Embeds every file under the package's `Kernels/` folder into the target as a Swift string
/// constant, so the `glint` binary carries its OpenCL C source and needs no resource bundle.
@main
struct EmbedKernels: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let kernels = context.package.directoryURL.appending(path: "Kernels")
        var inputs: [URL] = []
        if let walker = FileManager.default.enumerator(at: kernels, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker {
                let ext = url.pathExtension
                if ext == "cl" || ext == "h" { inputs.append(url) }
            }
        }
        inputs.sort { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedKernels.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) kernel files",
                executable: try context.tool(named: "EmbedKernelsTool").url,
                arguments: [kernels.path, output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
