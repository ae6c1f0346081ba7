/* test_jinja.c - the Jinja interpreter on focused cases. Every expected string below was
 * produced by Python jinja2 3.1 configured as transformers' apply_chat_template (trim_blocks,
 * lstrip_blocks, HF's tojson), not by sunny; the whole-template comparison against jinja2 on the
 * real corpus is tests/integration/test_jinja_oracle.sh. The other cases check the failure
 * contract: jinja2-style errors are SN_JINJA_RAISED, unimplemented constructs and runaway
 * templates are SN_EUNSUPPORTED "cannot render: ... at line:col", never a crash or a hang. */
#include "jinja.h"
#include "sn_test.h"

#include <string.h>

static const char *VARS = "{\"messages\": [{\"role\": \"user\", \"content\": \" Hi é \"},"
                          " {\"role\": \"assistant\", \"content\": \"<think>x</think>\\nok\"}], \"n\": 3}";

static sn_status render(const char *tmpl, char **out, sn_err *err, const sn_jinja_opts *o) {
    cJSON *v = cJSON_Parse(VARS);
    sn_jinja *t = NULL;
    *out = NULL;
    sn_status st = sn_jinja_parse(tmpl, strlen(tmpl), &t, err);
    if (!st) st = sn_jinja_render(t, v, o, out, NULL, err);
    sn_jinja_free(t);
    cJSON_Delete(v);
    return st;
}

static void test_matches_jinja2(void) {
    static const char *cases[][2] = {
    {"a\n  {% if true %}\n    b\n  {% endif %}\nc\n",
     "a\n    b\nc"},
    {"{%- for m in messages -%}[{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}{{ m.role|upper }}:{{ m.content|trim }}]{%- endfor %}",
     "[1/2,USER:Hi é][2/2ASSISTANT:<think>x</think>\nok]"},
    {"{% set ns = namespace(k=0) %}{% for i in range(5) if i is odd %}{% set ns.k = ns.k + i %}{% endfor %}{{ ns.k }}",
     "4"},
    {"{{ messages[1].content.split('</think>')[-1].lstrip('\\n') }}|{{ 'abc'[::-1] }}|{{ 'héllo'[1:3] }}",
     "ok|cba|él"},
    {"{{ {'b': [1, 2.5, none, true], 'a': 'é\"'}|tojson }}|{{ {'b': 1, 'a': [1]}|tojson(indent=2, sort_keys=true) }}",
     "{\"b\": [1, 2.5, null, true], \"a\": \"é\\\"\"}|{\n  \"a\": [\n    1\n  ],\n  \"b\": 1\n}"},
    {"{% macro f(a, b='x') %}<{{ a }}{{ b }}{{ caller() if caller is defined }}>{% endmacro %}{{ f(1) }}{% call f(2, b='y') %}C{% endcall %}",
     "<1x><2yC>"},
    {"{{ 7 // -2 }} {{ -7 % 3 }} {{ 1 / 4 }} {{ 2 ** 10 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ [1, 'a'] }} {{ none }} {{ undefined_name }}.",
     "-4 2 0.25 1024 1e+20 0.30000000000000004 [1, 'a'] None ."},
    {"{{ (messages|selectattr('role', 'equalto', 'user')|list|length) }}{{ messages|map(attribute='role')|join(',') }}{{ 'x' if messages|selectattr('role','equalto','nobody') else 'y' }}",
     "1user,assistantx"},
    {"{{ \"a\" ~ 1 ~ none }} {{ 'q' in 'xqz' }} {{ 2 in [1, 2] }} {{ 'role' in messages[0] }} {{ messages[0].get('zz', 'dflt') }}",
     "a1None True True True dflt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        sn_err err = {0};
        sn_status st = render(cases[i][0], &out, &err, NULL);
        if (st || strcmp(out, cases[i][1]) != 0)
            fprintf(stderr, "case %zu: status %d (%s)\n got: [%s]\nwant: [%s]\n", i, st, err.msg, out ? out : "", cases[i][1]);
        CU_ASSERT_EQUAL(st, SN_OK);
        CU_ASSERT_STRING_EQUAL(out ? out : "", cases[i][1]);
        free(out);
    }
}

static void expect(const char *tmpl, sn_status want, const char *msg_part) {
    char *out;
    sn_err err = {0};
    sn_jinja_opts o = {.now = 0, .max_steps = 100000, .max_output = 1 << 16, .max_memory = 64u << 20};
    sn_status st = render(tmpl, &out, &err, &o);
    if (st != want || !strstr(err.msg, msg_part))
        fprintf(stderr, "template %s: status %d, message '%s' (want %d, '%s')\n", tmpl, st, err.msg, want, msg_part);
    CU_ASSERT_EQUAL(st, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    CU_ASSERT_PTR_NULL(out);
    free(out);
}

static void test_failures(void) {
    expect("{{ raise_exception('no system role') }}", SN_JINJA_RAISED, "no system role");
    expect("{{ nope.attr }}", SN_JINJA_RAISED, "'nope' is undefined");
    expect("{{ messages.append(1) }}", SN_JINJA_RAISED, "unsafe");
    expect("{% if true %}x", SN_JINJA_RAISED, "expected 'elif'");
    expect("{{ 'a' + 1 }}", SN_JINJA_RAISED, "unsupported operand");
    expect("line1\n{% include 'x.j' %}", SN_EUNSUPPORTED, "cannot render: the 'include' statement at 2:4");
    expect("{{ x|frobnicate }}", SN_EUNSUPPORTED, "cannot render: the filter 'frobnicate' at 1:5");
    expect("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", SN_EUNSUPPORTED, "cannot render: ");
    expect("{% for i in range(100000) %}{% if i > 99999 %}x{% endif %}{% endfor %}", SN_EUNSUPPORTED, "evaluation steps (the caller's limit)");
    expect("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", SN_EUNSUPPORTED, "deeper than 64");
    expect("{{ 'x' * 100000000 }}", SN_EUNSUPPORTED, "output budget (the caller's limit)");
    expect("{% for i in range(60000) %}{{ 'abcdefgh' * 4 }}{% endfor %}", SN_EUNSUPPORTED, "limit");
    char deep[1300];
    memset(deep, '(', 600);
    strcpy(deep + 600, "1");
    memset(deep + 601, ')', 600);
    deep[1201] = 0;
    char tmpl[1400];
    snprintf(tmpl, sizeof tmpl, "{{ %s }}", deep);
    expect(tmpl, SN_EUNSUPPORTED, "deeper than 200");
}

static const sn_test_case cases[] = {
    {"renders like jinja2", test_matches_jinja2},
    {"errors, refusals and limits", test_failures},
};
SN_TEST_MAIN("jinja", cases)
