/* iq4_lanes.h - the body of the lane-parallel IQ4 block-scale search (ggml_quant_legacy.c's
 * iq4_block_scale), written once and included by ggml_quant_legacy.c once per vector width (AVX2: 8
 * blocks, AVX-512: 16) with lane_ops.h's operations and the includer's IQ4_TABLE (the 16 levels in
 * registers), IQ4_LOOKUP(k) (the level of each lane's index k) and IQ4_FLOOR(v) (each lane's k
 * below); the file is not a header of its own.
 *
 * Lane j runs block j with exactly the scalar operations in the scalar order (no FMA, ordered
 * compares), so the scales are bit-identical. The level iq4_index picks: k = the largest index with
 * values[k] <= v (counted by compares; what the binary search finds), then k or k + 1 by the same
 * float subtractions and tie rule; below values[0] and above values[15] the counting alone gives 0 /
 * 15, as the early returns do; NaN takes 15, the binary search's fall-through. */
QK_TARGET static void IQ4_NAME(const float *x, int nblk, float *d_out) {
    float xt[32 * QK_LANES] = {0}, out[QK_LANES], tv[16];
    for (int b = 0; b < nblk; b++) /* lanes past nblk: zeros, a tiny block (scale 0), not stored */
        for (int j = 0; j < 32; j++) xt[j * QK_LANES + b] = x[32 * b + j];
    for (int j = 0; j < 16; j++) tv[j] = (float)sn_iq4nl_values[j];
    IQ4_TABLE(tv);
    const VF zero = SET1F(0.0f), absmask = ABSMASK(), top = SET1F(tv[15]);
    const VI one = SET1I(1);
    (void)tv;
    VF xv[32], w[32], max = zero, amax = zero;
    for (int j = 0; j < 32; j++) {
        xv[j] = LOADF(xt + QK_LANES * j);
        w[j] = MUL(xv[j], xv[j]);
        VF ax = ANDF(xv[j], absmask);
        VM gt = CMPF(ax, amax, _CMP_GT_OQ);
        amax = SELF(gt, ax, amax);
        max = SELF(gt, xv[j], max);
    }
    const VM tiny = CMPF(amax, SET1F(GROUP_MAX_EPS), _CMP_LT_OQ);
    VF d = DIV(XORF(max, SET1F(-0.0f)), SET1F(tv[0])), best = zero; /* d = -max / values[0] */
    /* itry -8: the fit at id = 1 / d; then the 15 trial scales (itry + values[0]) / max */
    for (int itry = -8; itry <= 7; itry++) {
        const VF id = itry < -7 ? DIV(SET1F(1.0f), d) : DIV(SET1F((float)(itry + sn_iq4nl_values[0])), max);
        VF sumqx = zero, sumq2 = zero;
        for (int j = 0; j < 32; j++) {
            const VF v = MUL(id, xv[j]);
            const VI k = IQ4_FLOOR(v);
            const VF lo = IQ4_LOOKUP(k), hi = IQ4_LOOKUP(ADDI(k, one));
            VF q = SELF(CMPF(SUB(v, lo), SUB(hi, v), _CMP_LT_OQ), lo, hi);
            q = SELF(CMPF(v, v, _CMP_UNORD_Q), top, q);
            const VF wq = MUL(w[j], q);
            sumqx = ADD(sumqx, MUL(wq, xv[j]));
            sumq2 = ADD(sumq2, MUL(wq, q));
        }
        const VM pos = CMPF(sumq2, zero, _CMP_GT_OQ);
        if (itry < -7) {
            d = SELF(pos, DIV(sumqx, sumq2), zero);
            best = MUL(d, sumqx);
            continue;
        }
        const VM take = MAND(pos, CMPF(MUL(sumqx, sumqx), MUL(best, sumq2), _CMP_GT_OQ));
        if (!MANY(take)) continue;
        d = SELF(take, DIV(sumqx, sumq2), d);
        best = SELF(take, MUL(d, sumqx), best);
    }
    STOREF(out, SELF(tiny, zero, d));
    memcpy(d_out, out, (size_t)nblk * sizeof *d_out);
}
#undef IQ4_NAME
#undef IQ4_TABLE
#undef IQ4_LOOKUP
#undef IQ4_FLOOR
