import GlintCL
import GlintWorkloads
import Testing

/// The first OpenCL device's shared context. Tests never skip OpenCL: with PoCL installed (as in
/// CI) a missing device is a failure, with the inventory's reason in the message.
func openCLContext() throws -> ComputeContext {
    let inventory = DeviceInventory.scan()
    let device = try #require(inventory.devices.first, "no OpenCL device: \(inventory.problem ?? "?")")
    return try ComputeContext.shared(for: device)
}
