/// Mandelbrot, z' = z² + c with c the pixel: dz' = 2·Z·dz + dz² + dc (DeltaFormula's quadratic
/// steps with c). The kernels' twin is Kernels/deep/mandelbrot.h. Only Mandelbrot has a BLA
/// table (BLATable).
enum MandelbrotDelta: DeltaFormula {
    static var usesTable: Bool { true }
    static var addsC: Bool { true }
}
