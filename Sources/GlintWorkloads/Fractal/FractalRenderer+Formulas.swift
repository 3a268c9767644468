import CGlintTypes
import GlintCL
import GlintCore

/// FractalRenderer's hooks for deep zoom of Julia and Burning Ship (PerturbationFormulas, the
/// kernels of Kernels/perturb.cl): the reference orbits, the kernels' params and the
/// kernel. Mandelbrot's perturbation is deepParams' and perturb.cl's.
extension FractalRenderer {
    /// The reference orbits of a julia or burning-ship perturbation render (computed in MPFR);
    /// nil for any other render.
    static func formulaOrbit(_ job: FractalJob) throws -> FormulaOrbit? {
        guard job.precision == .perturbation, job.formula == .julia || job.formula == .burningShip else { return nil }
        return try FormulaOrbit(job: job)
    }

    /// The kernels' params of a julia or burning-ship perturbation render: the job's, with
    /// scale_bits holding the mantissa in [1, 2) of the pixel spacing 2 / (zoom × height) from
    /// MPFR (its exponent is the kernels' spacing_exp argument: FormulaOrbit.spacingExponent).
    static func formulaParams(_ job: FractalJob) throws -> GlintFractalParams {
        var p = job.params
        let zoom = job.exactZoom
        let spacing = ReferenceOrbit.spacing(zoom: zoom, height: job.height,
                                             precision: ReferenceOrbit.precisionBits(zoom: zoom))
        p.scale_bits = spacing.mantissa.bitPattern
        p.scale = 0
        return p
    }

    /// The escape kernel for `orbit`'s formula; its arguments are (counts, mags, [u with the
    /// derivative,] orbit re, orbit im, main count, orbit count, spacing exponent, params, first
    /// sample row, sample rows).
    static func formulaKernel(_ orbit: FormulaOrbit, on cc: ComputeContext, derivative: Bool) throws -> Kernel {
        let program = try cc.program("perturb.cl", defines: PerturbationCPU.kernelDefines + ["DERIV=\(derivative ? 1 : 0)"])
        return try program.kernel(orbit.formula == .julia ? "perturb_julia_escape" : "perturb_burning_ship_escape")
    }
}
