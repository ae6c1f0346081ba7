/* prove.h - a template claim is made only when rendering proves it: the model's Jinja (sunny's C
 * interpreter, jinja.h) and a family's Go template (the C evaluator with Ollama's semantics,
 * gotmpl.h) must give byte-identical prompts on a fixed set of probe conversations (system / no
 * system, one and several turns, unicode, template syntax inside content), modulo the one leading
 * BOS the tokenizer adds itself. A family may be parametrised by a default system prompt (the
 * Modelfile SYSTEM, which Ollama prepends when a conversation has none) that is read off the
 * Jinja's own rendering and then verified like everything else.
 *
 * Probes on which the Jinja itself raises (e.g. "System role not supported") are skipped and
 * named; at least the probes without a system message must render. A Jinja whose output depends
 * on the clock (strftime_now) can never be matched by a fixed Go template and is refused.
 *
 * A Jinja that strips message content (`| trim`, `.strip()`: llama3, gemma, llama.cpp's rwkv-world)
 * cannot be matched by any Go template, since Ollama's template functions have no trim. Such a
 * family is proven in a weaker, stated sense: on every probe with surrounding white space in content
 * (the "whitespace" probe), the Go template given the same conversation with each content stripped
 * renders exactly what the Jinja renders for the original (n_trimmed counts those probes). A claim
 * of that kind says so ("equal for content without surrounding white space"); an exact family is
 * always preferred to it. */
#ifndef SN_TEMPLATES_PROVE_H
#define SN_TEMPLATES_PROVE_H
#include "templates.h"

typedef struct sn_tmpl_proof {
    int identical;             /* every rendered probe identical */
    size_t n_probes, n_same, n_skipped;
    char skipped[256];         /* probes the Jinja refuses, with its message */
    char probe[48];            /* first differing probe */
    size_t offset;             /* byte offset of the first difference */
    char jinja_snip[200];      /* the two renderings around it (escaped) */
    char go_snip[200];
    char reason[600];          /* why no proof: the difference, an error, clock dependence */
    char *system;              /* default system prompt the family needs (malloc'd) or NULL */
    size_t n_trimmed;          /* probes equal only when the Go side gets the content stripped */
    char trim_probe[48];       /* the first of them */
    unsigned trim_roles;       /* whose content: SN_TMPL_TRIM_* bits */
} sn_tmpl_proof;

enum { SN_TMPL_TRIM_SYSTEM = 1, SN_TMPL_TRIM_USER = 2, SN_TMPL_TRIM_ASSISTANT = 4, SN_TMPL_TRIM_OTHER = 8 };

/* The roles of a trim_roles mask in words, e.g. "user and assistant" (a static string). */
const char *sn_tmpl_trim_roles_name(unsigned roles);

typedef struct sn_tmpl_model {
    const char *jinja;
    const char *bos_token, *eos_token; /* NULL when unknown */
    int add_bos;                       /* tokenizer adds BOS: 1, 0, -1 unknown */
} sn_tmpl_model;

/* Renders both sides on every probe. SN_OK with out->identical set or cleared (and reason /
 * first difference filled); an error only for OOM. The Go side gets out->system if the family
 * needs one (try_system: allowed to derive it from the Jinja). */
sn_status sn_tmpl_prove(const sn_tmpl_model *m, const sn_tmpl_family *f, int try_system,
                        sn_tmpl_proof *out, sn_err *err);
void sn_tmpl_proof_free(sn_tmpl_proof *p);

/* Picks the family to claim: HINT (the structural detection's pick, may be NULL) first, then
 * every family, first as is and then with a default system prompt derived from the Jinja; an exact
 * proof wins over one that needs stripped content (proof.n_trimmed > 0), which is taken only when
 * no family is exact. out->
 * family is NULL when none renders identically; out->proof then says why (the hint's first
 * difference, or the Jinja's own problem). */
typedef struct sn_tmpl_claim {
    const sn_tmpl_family *family;
    sn_tmpl_proof proof;
} sn_tmpl_claim;
sn_status sn_tmpl_choose(const sn_tmpl_set *set, const sn_tmpl_model *m, const sn_tmpl_family *hint,
                        sn_tmpl_claim *out, sn_err *err);

/* The probe conversations as a JSON array of {"name","messages"} (static, do not free). */
const char *sn_tmpl_probes_json(void);

#endif
