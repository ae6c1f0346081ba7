/* qkx2_lanes.h - the body of the lane-parallel make_qkx2_quants (sn_qkx2_quants), written once and
 * included by ggml_quant_k.c once per vector width (AVX2: 8 lanes, AVX-512: 16). The includer
 * defines QK_NAME, and QK_TARGET, QK_LANES, the vector types VF (floats), VI (int32), VM (a lane
 * mask) and the operations below through lane_ops.h; the file is not a header of its own.
 *
 * Lane j runs sub-block j and performs exactly the scalar operations in the scalar order (no FMA,
 * no reassociation, ordered compares where C compares), so the results are bit-identical; only
 * independent sub-blocks run side by side. xt/wt are transposed: element i of sub-block j is at
 * [i*QK_LANES + j]; levels go to Lt likewise, -min and the scale of each lane to the_min, scale_out. */
QK_TARGET void QK_NAME(int n, int nmax, const float *xt, const float *wt, int32_t *Lt, float *the_min,
                       float *scale_out, float rmin, float rdelta, int nstep, int use_mad) {
    int32_t Laux[32 * QK_LANES];
    const VF zero = SET1F(0.0f), absmask = ABSMASK();
    const VI izero = SET1I(0), inmax = SET1I(nmax);
    VF min = LOADF(xt), max = min;
    VF sum_w = LOADF(wt);
    VF sum_x = MUL(sum_w, min);
    for (int i = 1; i < n; i++) {
        VF x = LOADF(xt + i * QK_LANES), w = LOADF(wt + i * QK_LANES);
        min = MINF(x, min); /* x < min ? x : min */
        max = MAXF(x, max); /* x > max ? x : max */
        sum_w = ADD(sum_w, w);
        sum_x = ADD(sum_x, MUL(w, x));
    }
    min = SELF(CMPF(min, zero, _CMP_GT_OQ), zero, min);
    const VM flat = CMPF(max, min, _CMP_EQ_OQ);
    VF iscale = DIV(SET1F((float)nmax), SUB(max, min));
    VF scale = DIV(SET1F(1.0f), iscale);
    VF best_error = zero;
    for (int i = 0; i < n; i++) {
        VF x = LOADF(xt + i * QK_LANES), w = LOADF(wt + i * QK_LANES);
        VI l = NEAREST(MUL(iscale, SUB(x, min)));
        l = IMAX(izero, IMIN(inmax, l));
        STOREI(Lt + i * QK_LANES, l);
        VF diff = SUB(ADD(MUL(scale, CVT(l)), min), x);
        diff = use_mad ? ANDF(diff, absmask) : MUL(diff, diff);
        best_error = ADD(best_error, MUL(w, diff));
    }
    for (int is = 0; nstep >= 1 && is <= nstep; is++) {
        const float num = rmin + rdelta * (float)is + (float)nmax;
        iscale = DIV(SET1F(num), SUB(max, min)); /* min moves */
        VF sum_l = zero, sum_l2 = zero, sum_xl = zero;
        for (int i = 0; i < n; i++) {
            VF x = LOADF(xt + i * QK_LANES), w = LOADF(wt + i * QK_LANES);
            VI li = NEAREST(MUL(iscale, SUB(x, min)));
            li = IMAX(izero, IMIN(inmax, li));
            STOREI(Laux + i * QK_LANES, li);
            VF l = CVT(li), wl = MUL(w, l);
            sum_l = ADD(sum_l, wl);
            sum_l2 = ADD(sum_l2, MUL(wl, l));
            sum_xl = ADD(sum_xl, MUL(wl, x));
        }
        VF D = SUB(MUL(sum_w, sum_l2), MUL(sum_l, sum_l));
        const VM dpos = CMPF(D, zero, _CMP_GT_OQ);
        if (!MANY(dpos)) continue;
        VF this_scale = DIV(SUB(MUL(sum_w, sum_xl), MUL(sum_x, sum_l)), D);
        VF this_min = DIV(SUB(MUL(sum_l2, sum_x), MUL(sum_l, sum_xl)), D);
        const VM mpos = CMPF(this_min, zero, _CMP_GT_OQ);
        this_min = SELF(mpos, zero, this_min);
        this_scale = SELF(mpos, DIV(sum_xl, sum_l2), this_scale);
        VF cur_error = zero;
        for (int i = 0; i < n; i++) {
            VF x = LOADF(xt + i * QK_LANES), w = LOADF(wt + i * QK_LANES);
            VF diff = SUB(ADD(MUL(this_scale, CVT(LOADI(Laux + i * QK_LANES))), this_min), x);
            diff = use_mad ? ANDF(diff, absmask) : MUL(diff, diff);
            cur_error = ADD(cur_error, MUL(w, diff));
        }
        /* flat lanes returned early in the scalar code */
        const VM take = MANDNOT(flat, MAND(dpos, CMPF(cur_error, best_error, _CMP_LT_OQ)));
        if (!MANY(take)) continue;
        for (int i = 0; i < n; i++)
            STOREI(Lt + i * QK_LANES, SELI(take, LOADI(Laux + i * QK_LANES), LOADI(Lt + i * QK_LANES)));
        best_error = SELF(take, cur_error, best_error);
        scale = SELF(take, this_scale, scale);
        min = SELF(take, this_min, min);
    }
    /* flat sub-blocks: all levels 0, scale 0 */
    scale = SELF(flat, zero, scale);
    for (int i = 0; i < n; i++) STOREI(Lt + i * QK_LANES, SELI(flat, izero, LOADI(Lt + i * QK_LANES)));
    STOREF(the_min, XORF(min, SET1F(-0.0f)));
    STOREF(scale_out, scale);
}

/* Q4_K / Q5_K's weights of every lane's n values, av_x + |x| with av_x = sqrt(mean of x*x), the
 * squares summed in order as ggml does per sub-block (xt, wt transposed as above). */
QK_TARGET static void QKW_NAME(int n, const float *xt, float *wt) {
    const VF absmask = ABSMASK();
    VF sum = SET1F(0.0f);
    for (int i = 0; i < n; i++) {
        VF x = LOADF(xt + i * QK_LANES);
        sum = ADD(sum, MUL(x, x));
    }
    const VF av = SQRT(DIV(sum, SET1F((float)n)));
    for (int i = 0; i < n; i++) STOREF(wt + i * QK_LANES, ADD(av, ANDF(LOADF(xt + i * QK_LANES), absmask)));
}

/* the includer's names, so the next width can define its own (lane_ops.h undefines the rest) */
#undef QK_NAME
#undef QKW_NAME
