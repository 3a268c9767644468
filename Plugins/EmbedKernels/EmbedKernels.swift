import Foundation
import PackagePlugin

/// Embeds every file under the package's `Kernels/` folder into the target as a Swift string
/// constant, so the `glint` binary carries its OpenCL C source and needs no resource bundle; and
/// the files of `glint serve`'s page, under `Web/`, the same way.
/// It also records the git commit the package was built from (benchmark reports name it).
@main
struct EmbedKernels: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let kernels = package.appending(path: "Kernels")
        var inputs: [URL] = []
        if let walker = FileManager.default.enumerator(at: kernels, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker {
                let ext = url.pathExtension
                if ext == "cl" || ext == "h" { inputs.append(url) }
            }
        }
        // The page of `glint serve`: every file in Web/ (its modules included), listed afresh at
        // each build, so adding or editing one reruns the command. Names under /static/ are flat,
        // so only the folder's own files; hidden ones (an editor's) are left out. The tool refuses
        // a file that is not UTF-8 text.
        let web = package.appending(path: "Web")
        let listed = (try? FileManager.default.contentsOfDirectory(at: web, includingPropertiesForKeys: [.isRegularFileKey])) ?? []
        for url in listed where !url.lastPathComponent.hasPrefix(".") {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { inputs.append(url) }
        }
        inputs.sort { $0.path < $1.path }
        // The files that say which commit is checked out: a commit or checkout rewrites one of them,
        // which reruns the command.
        let git = GitFiles(package: package)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedKernels.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) kernel and web files",
                executable: try context.tool(named: "EmbedKernelsTool").url,
                arguments: [kernels.path, output.path, package.path, web.path] + inputs.map(\.path),
                inputFiles: inputs + git.watched,
                outputFiles: [output])
        ]
    }
}

/// The git metadata files worth watching for a package folder (none outside a git checkout).
struct GitFiles {
    var watched: [URL] = []

    init(package: URL) {
        let fm = FileManager.default
        var gitDir = package.appending(path: ".git")
        // A worktree's .git is a file naming its real folder.
        if let text = try? String(contentsOf: gitDir, encoding: .utf8), text.hasPrefix("gitdir:") {
            gitDir = URL(fileURLWithPath: text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let head = gitDir.appending(path: "HEAD")
        guard fm.fileExists(atPath: head.path) else { return }
        watched.append(head)
        var common = gitDir
        if let text = try? String(contentsOf: gitDir.appending(path: "commondir"), encoding: .utf8) {
            common = gitDir.appending(path: text.trimmingCharacters(in: .whitespacesAndNewlines)).standardizedFileURL
        }
        if let text = try? String(contentsOf: head, encoding: .utf8), text.hasPrefix("ref:") {
            let ref = common.appending(path: text.dropFirst(4).trimmingCharacters(in: .whitespacesAndNewlines))
            if fm.fileExists(atPath: ref.path) { watched.append(ref) }
        }
        let packed = common.appending(path: "packed-refs")
        if fm.fileExists(atPath: packed.path) { watched.append(packed) }
    }
}
