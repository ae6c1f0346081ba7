/* levels_lanes.h - a K-quant block's final levels against its rounded scales, in lanes: for each of
 * nsub sub-blocks of sublen values (a multiple of QK_LANES) with d[j] != 0 (0: the sub-block keeps
 * the fitted levels, as ggml does), L = clamp(nearest_int((x + dm[j]) / d[j]), lo, hi) + off, or
 * x / d[j] when dm is NULL - ggml's expressions, lane by lane. Included once per vector width with
 * lane_ops.h's operations and LEVELS_NAME; the file is not a header of its own. */
QK_TARGET static void LEVELS_NAME(const float *x, int nsub, int sublen, const float *d, const float *dm, int lo,
                                  int hi, int off, uint8_t *L) {
    const VI vlo = SET1I(lo), vhi = SET1I(hi), voff = SET1I(off);
    int32_t t[32];
    for (int j = 0; j < nsub; j++) {
        if (d[j] == 0.0f) continue;
        const VF vd = SET1F(d[j]), vdm = SET1F(dm ? dm[j] : 0.0f);
        for (int h = 0; h < sublen; h += QK_LANES) {
            VF v = LOADF(x + sublen * j + h);
            if (dm) v = ADD(v, vdm);
            STOREI(t + h, ADDI(IMAX(vlo, IMIN(vhi, NEAREST(DIV(v, vd)))), voff));
        }
        for (int i = 0; i < sublen; i++) L[sublen * j + i] = (uint8_t)t[i];
    }
}
#undef LEVELS_NAME
