import ArgumentParser
import GlintCore
import GlintWorkloads

/// Every workload's command, in the order `glint --help`, `compare` and `bench` list them. The
/// subcommands, `compare`'s and `bench`'s workloads and the `--then` passes all come from this
/// list: adding a workload adds one line here (docs/ADDING-A-WORKLOAD.md).
enum Workloads {
    static var all: [any WorkloadCommand.Type] {
        [
            Fractal.self,
            RTOW.self,
            Blur.self,
            Mist.self,
            Iso.self,
            Pulse.self,
        ]
    }

    static var names: [String] { all.map { $0.workload.name } }

    static func named(_ name: String) -> (any WorkloadCommand.Type)? {
        all.first { $0.workload.name == name }
    }

    /// The workloads that can follow a render as `--then NAME`.
    static var passes: [any PassCommand.Type] { all.compactMap { $0 as? any PassCommand.Type } }
}

/// A workload's subcommand: its library description, and what `glint compare` needs from it.
protocol WorkloadCommand: AsyncParsableCommand {
    /// The workload in the library: its name (the subcommand's) and its benchmark cases.
    static var workload: any Workload.Type { get }
    /// One line for `glint --help`.
    static var abstract: String { get }
    /// The subcommand's `--help` text: what it does, the formulas, examples.
    static var discussion: String { get }
    /// `--device`: compare refuses it (it runs the job on --a and --b).
    var device: DeviceOptions { get }
    /// `--shard` and `--skip-existing`.
    var sharding: ShardOptions { get }
    /// Options of this command that make no sense in a comparison (-o and the like), or nil.
    func comparisonConflict() -> String?
    /// A one-line description of the job, e.g. "fractal mandelbrot 800x600".
    func comparisonTitle() throws -> String
    /// The job as `glint compare` runs it (inputs read, options checked).
    func comparableJob() throws -> any ComparableJob
}

extension WorkloadCommand {
    /// The shard of --shard (nil without it; a bad one was refused while the options were read).
    var shard: Shard? { try? sharding.resolved() }
}

/// A workload that can also run as a `--then` pass after a render, with its own options.
protocol PassCommand: WorkloadCommand {
    static func pass(_ options: [String]) throws -> any ChainPass
}

/// A render that `--then` passes may follow.
protocol PassSource: WorkloadCommand {}

// MARK: Job fields and flags

/// The command-line flag of a job field, where it is not `--` and the field in kebab case.
private let flagOfField = [
    "maxIterations": "--iterations", "supersampling": "--ss", "samplesPerPixel": "--spp", "maxDepth": "--depth",
    "center re": "--center (real part)", "center im": "--center (imaginary part)",
]

/// `--corner-radius` for `cornerRadius`, `--iterations` for `maxIterations`.
func flag(forField field: String) -> String {
    if let flag = flagOfField[field] { return flag }
    var kebab = "--"
    for ch in field {
        if ch.isUppercase { kebab += "-" + ch.lowercased() } else { kebab.append(ch) }
    }
    return kebab
}

extension GlintError {
    /// The error as the command line says it: a job field's name replaced by its flag.
    var flagged: GlintError { field.map { naming(field: flag(forField: $0)) } ?? self }

    /// A usage error (exit status 2) with the flag named.
    var usage: ValidationError { ValidationError(flagged.message) }
}

extension WorkloadCommand {
    /// The subcommand is named after its workload; `abstract` and `discussion` are its help.
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: workload.name, abstract: abstract, discussion: discussion)
    }
}
