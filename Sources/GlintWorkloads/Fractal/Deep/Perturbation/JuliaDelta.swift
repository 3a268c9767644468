/// Julia, z' = z² + c with c fixed: dz' = 2·Z·dz + dz², c cancelling (DeltaFormula's quadratic
/// steps without c). The kernels' twin is Kernels/deep/julia.h.
enum JuliaDelta: DeltaFormula {
    static var addsC: Bool { false }
}
