/* q3_lanes.h - the body of the lane-parallel make_q3_quants (ggml_quant_k23.c's q3_quants: 16 values,
 * levels [-4, 3], the x^2-weighted fit and up to five passes moving single levels), written once and
 * included by ggml_quant_k23.c once per vector width (AVX2: 8 sub-blocks, AVX-512: 16) with
 * lane_ops.h's operations; the file is not a header of its own.
 *
 * Lane j runs sub-block j with exactly the scalar operations in the scalar order (no FMA, ordered
 * compares where C compares), so scales and levels are bit-identical. A lane whose pass changed
 * nothing would stop in the scalar code; running it again changes nothing (same state, same
 * decisions), so all lanes pass together until none changes. xt is transposed (element i of
 * sub-block j at [i*QK_LANES + j]); levels + 4 go to Lt likewise, the scales to scale_out. */
QK_TARGET static void Q3_NAME(const float *xt, int32_t *Lt, float *scale_out) {
    enum { N = 16, NMAX = 4 };
    const VF zero = SET1F(0.0f), absmask = ABSMASK();
    const VI lo = SET1I(-NMAX), hi = SET1I(NMAX - 1);
    VF amax = zero, max = zero;
    for (int i = 0; i < N; i++) { /* the signed largest magnitude, the first on ties */
        VF x = LOADF(xt + i * QK_LANES), ax = ANDF(x, absmask);
        VM gt = CMPF(ax, amax, _CMP_GT_OQ);
        amax = SELF(gt, ax, amax);
        max = SELF(gt, x, max);
    }
    const VM tiny = CMPF(amax, SET1F(GROUP_MAX_EPS), _CMP_LT_OQ);
    const VF iscale = DIV(SET1F((float)-NMAX), max);
    VF sumlx = zero, suml2 = zero;
    for (int i = 0; i < N; i++) {
        VF x = LOADF(xt + i * QK_LANES), w = MUL(x, x);
        VI l = IMAX(lo, IMIN(hi, NEAREST(MUL(iscale, x))));
        STOREI(Lt + i * QK_LANES, l);
        VF fl = CVT(l);
        sumlx = ADD(sumlx, MUL(MUL(w, x), fl));
        suml2 = ADD(suml2, MUL(MUL(w, fl), fl));
    }
    for (int itry = 0; itry < 5; itry++) {
        VM changed = MNONE();
        for (int i = 0; i < N; i++) {
            VF x = LOADF(xt + i * QK_LANES), w = MUL(x, x), wx = MUL(w, x);
            VI li = LOADI(Lt + i * QK_LANES);
            VF fl = CVT(li);
            VF slx = SUB(sumlx, MUL(wx, fl));
            const VM pos = CMPF(slx, zero, _CMP_GT_OQ);
            if (!MANY(pos)) continue;
            VF sl2 = SUB(suml2, MUL(MUL(w, fl), fl));
            VI nl = IMAX(lo, IMIN(hi, NEAREST(DIV(MUL(x, sl2), slx))));
            VF fn = CVT(nl);
            slx = ADD(slx, MUL(wx, fn));
            sl2 = ADD(sl2, MUL(MUL(w, fn), fn));
            const VM better = CMPF(MUL(MUL(slx, slx), suml2), MUL(MUL(sumlx, sumlx), sl2), _CMP_GT_OQ);
            const VM take = MAND(MANDNOT(ICMPEQ(nl, li), pos), MAND(CMPF(sl2, zero, _CMP_GT_OQ), better));
            if (!MANY(take)) continue;
            STOREI(Lt + i * QK_LANES, SELI(take, nl, li));
            sumlx = SELF(take, slx, sumlx);
            suml2 = SELF(take, sl2, suml2);
            changed = MOR(changed, take);
        }
        if (!MANY(changed)) break;
    }
    /* all-tiny sub-blocks: levels 0 (not + 4) and scale 0, as the scalar early return */
    const VI izero = SET1I(0), off = SET1I(NMAX);
    for (int i = 0; i < N; i++) STOREI(Lt + i * QK_LANES, SELI(tiny, izero, ADDI(LOADI(Lt + i * QK_LANES), off)));
    VF scale = SELF(CMPF(suml2, zero, _CMP_GT_OQ), DIV(sumlx, suml2), zero);
    STOREF(scale_out, SELF(tiny, zero, scale));
}

#undef Q3_NAME
