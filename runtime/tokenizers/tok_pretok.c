/* tok_pretok.c - the BPE pre-tokenizer: text -> pieces, split exactly where llama.cpp splits.
 *
 * llama.cpp picks a list of regexes by tokenizer.ggml.pre and applies them in turn, each one cutting
 * the pieces the previous left (matches and the gaps between them both become pieces). It does not
 * run them all through a regex engine: the GPT-2, Llama-3, Qwen2/3.5, newline and digit-group
 * patterns are hand-written splitters; patterns with \p{..} run on a "collapsed" one-byte-per-code-
 * point copy of the text; the rest run on code points with std::wregex. This file reproduces the
 * three mechanisms (the last two with PCRE2) with llama.cpp's Unicode 15.1 classes. */
#include "tok_internal.h"
#include "unicode_data.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>

#define OOR 0xFFFFFFFFu /* "no code point here" in the splitters */
#define MAX_RX 6

typedef enum { RX_CUSTOM_GPT2, RX_CUSTOM_LLAMA3, RX_CUSTOM_QWEN2, RX_CUSTOM_QWEN35,
               RX_CUSTOM_NEWLINES, RX_CUSTOM_DIGITS3, RX_COLLAPSED, RX_UTF } rx_kind;

struct sn_pretok {
    int n_rx;
    rx_kind kind[MAX_RX];
    pcre2_code *code[MAX_RX];
    uint32_t surrogate[MAX_RX]; /* RX_UTF: stand-in for surrogate code points (see rx_compile) */
};

typedef struct {
    int rx;            /* index into RX_SETS */
    unsigned flags;    /* SN_PRE_* */
    const char *names; /* the tokenizer.ggml.pre values that mean this pair, space-separated */
} pre_row;

uint16_t sn_tok_cp_flags(uint32_t cp) {
    if (cp < 128) return sn_ucd_ascii[cp];
    if (cp >= 0x110000) return SN_UCD_UNDEF;
    size_t lo = 0, hi = sn_ucd_n_ranges; /* last range with first <= cp */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (sn_ucd_ranges[mid].first <= cp) lo = mid; else hi = mid;
    }
    return sn_ucd_ranges[lo].flags;
}

/* ---------------------------------------------------------------------------------------------
 * Pre-tokenizer regex lists, as llama.cpp applies them per tokenizer.ggml.pre. Each list is applied
 * in order; every pattern splits the pieces left by the previous one (matches and the gaps between
 * them both become pieces). */

#define RXS_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RXS_LLAMA3_ORIG "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_CONTRACT "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RXS_LLAMA3 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_QWEN2 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_QWEN35 RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RXS_NEWLINES "[^\\n]+|[\\n]+"
#define RXS_GPT4O_CORE "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" RXS_CONTRACT "?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" RXS_CONTRACT "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* deepseek-llm's letter class, spelled out by code point ranges (UTF-8 escaped) */
static const char RXS_DEEPSEEK_LLM_LETTERS[] =
    "\\s?[A-Za-z\xc2\xb5\xc3\x80-\xc3\x96\xc3\x98-\xc3\xb6\xc3\xb8-\xc6\xba\xc6\xbc-\xc6\xbf\xc7"
    "\x84-\xca\x93\xca\x95-\xca\xaf\xcd\xb0-\xcd\xb3\xcd\xb6\xcd\xb7\xcd\xbb-\xcd\xbd\xcd\xbf\xce"
    "\x86\xce\x88-\xce\x8a\xce\x8c\xce\x8e-\xce\xa1\xce\xa3-\xcf\xb5\xcf\xb7-\xd2\x81\xd2\x8a-"
    "\xd4\xaf\xd4\xb1-\xd5\x96\xe1\x82\xa0-\xe1\x83\x85\xe1\x8e\xa0-\xe1\x8f\xb5\xe1\x8f\xb8-\xe1"
    "\x8f\xbd\xe1\xb2\x90-\xe1\xb2\xba\xe1\xb2\xbd-\xe1\xb2\xbf\xe1\xb4\x80-\xe1\xb4\xab\xe1\xb5"
    "\xab-\xe1\xb5\xb7\xe1\xb5\xb9-\xe1\xb6\x9a\xe1\xb8\x80-\xe1\xbc\x95\xe1\xbc\x98-\xe1\xbc\x9d"
    "\xe1\xbc\xa0-\xe1\xbd\x85\xe1\xbd\x88-\xe1\xbd\x8d\xe1\xbd\x90-\xe1\xbd\x97\xe1\xbd\x99\xe1"
    "\xbd\x9b\xe1\xbd\x9d\xe1\xbd\x9f-\xe1\xbd\xbd\xe1\xbe\x80-\xe1\xbe\xb4\xe1\xbe\xb6-\xe1\xbe"
    "\xbc\xe1\xbe\xbe\xe1\xbf\x82-\xe1\xbf\x84\xe1\xbf\x86-\xe1\xbf\x8c\xe1\xbf\x90-\xe1\xbf\x93"
    "\xe1\xbf\x96-\xe1\xbf\x9b\xe1\xbf\xa0-\xe1\xbf\xac\xe1\xbf\xb2-\xe1\xbf\xb4\xe1\xbf\xb6-\xe1"
    "\xbf\xbc\xe2\x84\x82\xe2\x84\x87\xe2\x84\x8a-\xe2\x84\x93\xe2\x84\x95\xe2\x84\x99-\xe2\x84"
    "\x9d\xe2\x84\xa4\xe2\x84\xa6\xe2\x84\xa8\xe2\x84\xaa-\xe2\x84\xad\xe2\x84\xaf-\xe2\x84\xb4"
    "\xe2\x84\xb9\xe2\x84\xbc-\xe2\x84\xbf\xe2\x85\x85-\xe2\x85\x89\xe2\x85\x8e\xe2\x86\x83\xe2"
    "\x86\x84\xe2\xb0\x80-\xe2\xb1\xbb\xe2\xb1\xbe-\xe2\xb3\xa4\xe2\xb3\xab-\xe2\xb3\xae\xe2\xb3"
    "\xb2\xe2\xb3\xb3\xea\x99\x80-\xea\x99\xad\xea\x9a\x80-\xea\x9a\x9b\xea\x9c\xa2-\xea\x9d\xaf"
    "\xea\x9d\xb1-\xea\x9e\x87\xea\x9e\x8b-\xea\x9e\x8e\xea\xad\xb0-\xea\xae\xbf\xef\xac\x80-\xef"
    "\xac\x86\xef\xac\x93-\xef\xac\x97\xef\xbc\xa1-\xef\xbc\xba\xef\xbd\x81-\xef\xbd\x9a\xf0\x90"
    "\x90\x80-\xf0\x90\x91\x8f\xf0\x90\x92\xb0-\xf0\x90\x93\x93\xf0\x90\x93\x98-\xf0\x90\x93\xbb"
    "\xf0\x90\xb2\x80-\xf0\x90\xb2\xb2\xf0\x90\xb3\x80-\xf0\x90\xb3\xb2\xf0\x91\xa2\xa0-\xf0\x91"
    "\xa3\x9f\xf0\x9e\xa4\x80-\xf0\x9e\xa5\x83]+";

enum {
    RXSET_DEFAULT, RXSET_GPT2, RXSET_LLAMA3, RXSET_QWEN2, RXSET_QWEN35, RXSET_STARCODER,
    RXSET_FALCON, RXSET_TEKKEN, RXSET_DEEPSEEK_CODER, RXSET_DEEPSEEK3, RXSET_PORO, RXSET_VIKING,
    RXSET_GPT4O, RXSET_SEED_CODER, RXSET_BAILINGMOE, RXSET_UFAKZEKA, RXSET_MINICPM5,
    RXSET_EXAONE_MOE, RXSET_JAIS2, RXSET_LAGUNA, RXSET_CHAMELEON, RXSET_DEEPSEEK_LLM, RXSET_SPARK2_5, RXSET_YOUTU,
    RXSET_GRANITE_EMB, RXSET_SUPERBPE, RXSET_TINY_AYA, RXSET_AFMOE, RXSET_NEWLINES, RXSET_COUNT
};

static const char *const RX_SETS[RXSET_COUNT][MAX_RX + 1] = {
    [RXSET_DEFAULT] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", RXS_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL},
    [RXSET_GPT2] = {RXS_GPT2, NULL},
    [RXSET_LLAMA3] = {RXS_LLAMA3, NULL},
    [RXSET_QWEN2] = {RXS_QWEN2, NULL},
    [RXSET_QWEN35] = {RXS_QWEN35, NULL},
    [RXSET_STARCODER] = {"\\p{N}", RXS_GPT2, NULL},
    [RXSET_FALCON] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RXS_GPT2, "[0-9][0-9][0-9]", NULL},
    [RXSET_TEKKEN] = {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|"
                      "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}|"
                      " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_DEEPSEEK_CODER] = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
                              "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+",
                              "\\p{N}", NULL},
    [RXSET_DEEPSEEK_LLM] = {"[\r\n]", RXS_DEEPSEEK_LLM_LETTERS,
                            "\\s?[!-/:-~\xef\xbc\x81-\xef\xbc\x8f\xef\xbc\x9a-\xef\xbd\x9e\xe2\x80\x98-\xe2\x80\x9f\xe3\x80\x80-\xe3\x80\x82]+",
                            "\\s+$",
                            "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+",
                            "\\p{N}+", NULL},
    [RXSET_SPARK2_5] = {
        "\\p{N}{1,3}",
        "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
        "\\p{N}",
        NULL},
    [RXSET_YOUTU] = {
        "[\xea\xb0\x80-\xed\x9e\xa3\xe3\x84\xb1-\xe3\x86\x8e]+|[\xef\xbc\x81\xe2\x80\xa6\xe2\x80\x9c\xe2\x80\x9d\xe2\x80\x98\xe2\x80\x99\xe2\x80\x94\xef\xbc\x9a\xef\xbc\x9b\xef\xbc\x8c\xe3\x80\x81-\xe3\x80\xbf\xef\xb8\xb0-\xef\xb9\x8f]+|[\xe3\x84\x85-\xe3\x84\xaf]+|[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_GRANITE_EMB] = {
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_SUPERBPE] = {
        "\\p{N}+",
        "(?=(\\d{3})+(?!\\d))",
        NULL},
    [RXSET_TINY_AYA] = {
        "\\d{1,3}(?=(?:\\d{3})*\\b)",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_AFMOE] = {
        "\\p{AFMoE_digits}",
        "[\xe4\xb8\x80-\xe9\xbf\xbf\xe3\x90\x80-\xe4\xb6\xbf\xe8\xb1\x88-\xef\xab\xbf\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf\xef\xbd\xa5-\xef\xbe\x9f\xe2\xbc\x80-\xe2\xbf\x9f\xe0\xb9\x80-\xe0\xb9\xbf\xe0\xba\x80-\xe0\xbb\xbf\xe1\x9e\x80-\xe1\x9f\xbf\xe1\x80\x80-\xe1\x82\x9f\xea\xa9\xa0-\xea\xa9\xbf\xea\xa7\xa0-\xea\xa7\xbf\xea\xb0\x80-\xed\x9e\xaf\xe1\x84\x80-\xe1\x87\xbf]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        NULL},
    [RXSET_DEEPSEEK3] = {"\\p{N}{1,3}",
                         "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
                         "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
                         " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_PORO] = {" ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+", NULL},
    [RXSET_VIKING] = {" ?[^(\\s|.,!?\xe2\x80\xa6\xe3\x80\x82\xef\xbc\x8c\xe3\x80\x81\xe0\xa5\xa4\xdb\x94\xd8\x8c)]+", "\\p{N}", NULL},
    [RXSET_GPT4O] = {RXS_GPT4O_CORE, NULL},
    [RXSET_SEED_CODER] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|"
                          "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_BAILINGMOE] = {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
                          " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_UFAKZEKA] = {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
                        "\\s+(?!\\S)|\\s+", NULL},
    [RXSET_MINICPM5] = {"\\p{N}{1,3}", RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_EXAONE_MOE] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}|"
                          " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL},
    [RXSET_JAIS2] = {RXS_CONTRACT "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                     "\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|"
                     "\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}", NULL},
    [RXSET_LAGUNA] = {RXS_NEWLINES, RXS_QWEN2, NULL},
    [RXSET_NEWLINES] = {RXS_NEWLINES, NULL},
    [RXSET_CHAMELEON] = {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
                         "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", RXS_GPT2, NULL},
};

/* tokenizer.ggml.pre -> regex list and flags (llama.cpp's llama_vocab::impl::load): one row per
 * pair, naming every value llama.cpp treats alike, in RX_SETS order (row 0 is "default"). */
static const pre_row PRE_TABLE[] = {
    {RXSET_DEFAULT, 0, "default"},
    {RXSET_GPT2, 0, "mpt gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert "
                    "jina-v1-en jina-v2-code roberta-bpe olmo jais exaone4"},
    {RXSET_GPT2, SN_PRE_KEEP_SPACES, "trillion granite-docling"},
    {RXSET_LLAMA3, SN_PRE_IGNORE_MERGES | SN_PRE_ADD_BOS, "llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral "
                                                          "midm-2.0 lfm2 jina-v5-nano"},
    {RXSET_LLAMA3, 0, "dbrx smaug-bpe"},
    {RXSET_LLAMA3, SN_PRE_NO_BOS_ID, "glm4 chatglm-bpe"},
    {RXSET_QWEN2, SN_PRE_KEEP_SPACES, "qwen2 deepseek-r1-qwen kormo f2llmv2 hunyuan grok-2 solar-open"},
    {RXSET_QWEN2, 0, "stablelm2 megrez"},
    {RXSET_QWEN35, SN_PRE_KEEP_SPACES, "qwen35"},
    {RXSET_STARCODER, 0, "starcoder refact codeshell exaone minerva-7b mellum2"},
    {RXSET_STARCODER, SN_PRE_KEEP_SPACES, "command-r smollm"},
    {RXSET_FALCON, 0, "falcon"},
    {RXSET_TEKKEN, SN_PRE_KEEP_SPACES | SN_PRE_IGNORE_MERGES | SN_PRE_ADD_BOS, "tekken"},
    {RXSET_DEEPSEEK_CODER, SN_PRE_KEEP_SPACES, "deepseek-coder"},
    {RXSET_DEEPSEEK3, SN_PRE_KEEP_SPACES, "deepseek-v3 hunyuan-dense hy_v4 joyai-llm"},
    {RXSET_PORO, SN_PRE_KEEP_SPACES, "poro-chat"},
    {RXSET_PORO, 0, "bloom gpt3-finnish"},
    {RXSET_VIKING, SN_PRE_KEEP_SPACES, "viking"},
    {RXSET_GPT4O, SN_PRE_KEEP_SPACES, "gpt-4o llama4 kanana2 talkie minimax-m2"},
    {RXSET_SEED_CODER, SN_PRE_KEEP_SPACES, "seed-coder"},
    {RXSET_BAILINGMOE, SN_PRE_KEEP_SPACES, "bailingmoe bailingmoe2 llada-moe"},
    {RXSET_UFAKZEKA, SN_PRE_KEEP_SPACES, "ufakzeka"},
    {RXSET_MINICPM5, SN_PRE_IGNORE_MERGES, "minicpm5"},
    {RXSET_EXAONE_MOE, 0, "exaone-moe"},
    {RXSET_JAIS2, 0, "jais-2"},
    {RXSET_LAGUNA, SN_PRE_KEEP_SPACES, "laguna"},
    {RXSET_CHAMELEON, SN_PRE_ADD_BOS | SN_PRE_KEEP_SPACES, "chameleon"},
    {RXSET_DEEPSEEK_LLM, SN_PRE_KEEP_SPACES, "deepseek-llm"},
    {RXSET_SPARK2_5, SN_PRE_KEEP_SPACES, "spark2_5"},
    {RXSET_YOUTU, SN_PRE_KEEP_SPACES | SN_PRE_IGNORE_MERGES, "youtu"},
    {RXSET_GRANITE_EMB, SN_PRE_KEEP_SPACES | SN_PRE_IGNORE_MERGES, "granite-embed-multi-97m"},
    {RXSET_SUPERBPE, SN_PRE_KEEP_SPACES, "superbpe"},
    {RXSET_TINY_AYA, SN_PRE_KEEP_SPACES, "tiny_aya cohere2moe"},
    {RXSET_AFMOE, SN_PRE_KEEP_SPACES, "afmoe"},
    {RXSET_NEWLINES, SN_PRE_SPM_STYLE | SN_PRE_GEMMA4, "gemma4 granite-embed-multi-311m"},
    {RXSET_NEWLINES, SN_PRE_SPM_STYLE | SN_PRE_KEEP_SPACES, "sarvam-moe"},
};

/* Pre-tokenizers llama.cpp knows but sunny does not implement (custom splitters or whitespace
 * escaping we have not reproduced): refused at load instead of tokenizing differently. */
static const char *const PRE_UNSUPPORTED[] = {
    "whitespace", "kimi-k2",
};

/* The \p{..} classes llama.cpp rewrites for its byte-collapsed regex run: each class becomes one
 * stand-in byte for all non-ASCII members plus the ASCII members spelled out. */
typedef struct { const char *name; char byte; const char *ascii; } ucat_row;
static const ucat_row UCAT[] = {
    {"\\p{N}", (char)0xD1, "0-9"},
    {"\\p{L}", (char)0xD2, "A-Za-z"},
    {"\\p{P}", (char)0xD3, "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", (char)0xD4, ""},
    {"\\p{S}", (char)0xD5, "\\$\\+<->^`\\|\\~"},
    {"\\p{Lu}", (char)0xD2, "A-Za-z"},
    {"\\p{Ll}", (char)0xD2, "A-Za-z"},
    {"\\p{Lt}", (char)0xD2, "A-Za-z"},
    {"\\p{Lm}", (char)0xD2, "A-Za-z"},
    {"\\p{Lo}", (char)0xD2, "A-Za-z"},
};

static bool rx_has_ucat(const char *rx) {
    for (size_t i = 0; i < sizeof UCAT / sizeof UCAT[0]; i++)
        if (strstr(rx, UCAT[i].name)) return true;
    return false;
}

/* Rewrites each \p{X} to its collapsed class ([..] when outside a bracket expression). */
static bool rx_collapse(const char *rx, bbuf *out) {
    size_t n = strlen(rx);
    bool inside = false;
    for (size_t i = 0; i < n; i++) {
        if (rx[i] == '[' && (i == 0 || rx[i - 1] != '\\')) {
            if (!bbuf_add(out, "[", 1)) return false;
            inside = true;
            continue;
        }
        if (inside && rx[i] == ']' && rx[i - 1] != '\\') {
            if (!bbuf_add(out, "]", 1)) return false;
            inside = false;
            continue;
        }
        if (rx[i] == '\\' && i + 3 < n && rx[i + 1] == 'p' && rx[i + 2] == '{') {
            const char *close = strchr(rx + i + 3, '}');
            if (close && (size_t)(close - rx) <= i + 10) {
                size_t plen = (size_t)(close - rx) - i + 1;
                for (size_t k = 0; k < sizeof UCAT / sizeof UCAT[0]; k++) {
                    if (strlen(UCAT[k].name) != plen || memcmp(UCAT[k].name, rx + i, plen) != 0) continue;
                    if ((!inside && !bbuf_add(out, "[", 1)) || !bbuf_add(out, &UCAT[k].byte, 1) ||
                        !bbuf_add(out, UCAT[k].ascii, strlen(UCAT[k].ascii)) ||
                        (!inside && !bbuf_add(out, "]", 1)))
                        return false;
                    i = (size_t)(close - rx);
                    goto next;
                }
            }
        }
        if (!bbuf_add(out, rx + i, 1)) return false;
    next:;
    }
    return true;
}

/* llama.cpp matches these patterns with std::wregex over raw code points, where a surrogate (from
 * CESU-8-style input) is just a number, e.g. inside afmoe's range U+8C48-U+FAFF. PCRE2's UTF mode
 * cannot hold surrogates, so they are replaced by a code point that lies in exactly the same
 * literal ranges of this pattern as U+D800..U+DFFF do (the patterns never name a surrogate alone). */
static uint32_t surrogate_stand_in(const char *rx) {
    static const uint32_t cand[] = {0xFFFD, 0xE000, 0xF8FF, 0xFFFE, 0x10FFFD};
    size_t n = strlen(rx);
    for (size_t c = 0; c < sizeof cand / sizeof cand[0]; c++) {
        bool fits = true;
        size_t off = 0;
        uint32_t prev = OOR;
        while (off < n && fits) {
            if (rx[off] == '\\') { off += 2; prev = OOR; continue; }
            uint32_t cp = sn_utf8_next((const unsigned char *)rx, n, &off);
            if (cp == '-' && prev != OOR && off < n && rx[off] != ']' && rx[off] != '\\') {
                uint32_t hi = sn_utf8_next((const unsigned char *)rx, n, &off);
                bool has_sur = prev <= 0xDFFF && hi >= 0xD800, has_c = prev <= cand[c] && cand[c] <= hi;
                if (has_sur != has_c) fits = false;
                prev = OOR;
                continue;
            }
            if (cp == cand[c]) fits = false;
            prev = cp;
        }
        if (fits) return cand[c];
    }
    return 0xFFFD;
}

static sn_status rx_compile(sn_pretok *t, int k, const char *rx, sn_err *err) {
    if (!strcmp(rx, RXS_GPT2)) { t->kind[k] = RX_CUSTOM_GPT2; return SN_OK; }
    if (!strcmp(rx, RXS_LLAMA3) || !strcmp(rx, RXS_LLAMA3_ORIG)) { t->kind[k] = RX_CUSTOM_LLAMA3; return SN_OK; }
    if (!strcmp(rx, RXS_QWEN2)) { t->kind[k] = RX_CUSTOM_QWEN2; return SN_OK; }
    if (!strcmp(rx, RXS_QWEN35)) { t->kind[k] = RX_CUSTOM_QWEN35; return SN_OK; }
    if (!strcmp(rx, RXS_NEWLINES)) { t->kind[k] = RX_CUSTOM_NEWLINES; return SN_OK; }
    if (!strcmp(rx, "\\p{AFMoE_digits}") || !strcmp(rx, "\\d{1,3}(?=(?:\\d{3})*\\b)")) {
        t->kind[k] = RX_CUSTOM_DIGITS3;
        return SN_OK;
    }
    bbuf pat = {0};
    uint32_t opts = PCRE2_DOLLAR_ENDONLY; /* ECMAScript '$' is end of input only */
    if (rx_has_ucat(rx)) {
        /* llama.cpp runs these on a one-byte-per-code-point "collapsed" copy of the text, so the
         * pattern works on bytes: no UTF, no UCP (only ASCII is \s/\d/\w, as in std::regex). */
        t->kind[k] = RX_COLLAPSED;
        if (!rx_collapse(rx, &pat)) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    } else {
        /* std::wregex over code points in llama.cpp: UTF-8 here, still without UCP. */
        t->kind[k] = RX_UTF;
        opts |= PCRE2_UTF;
        if (!bbuf_add(&pat, rx, strlen(rx))) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
        t->surrogate[k] = surrogate_stand_in(rx);
    }
    int ec = 0;
    PCRE2_SIZE eo = 0;
    t->code[k] = pcre2_compile((PCRE2_SPTR)pat.v, pat.n, opts, &ec, &eo, NULL);
    free(pat.v);
    if (!t->code[k]) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return sn_err_set(err, SN_EFORMAT, "tokenizer: pre-tokenizer regex %d does not compile at %zu: %s",
                          k, (size_t)eo, (const char *)msg);
    }
    pcre2_jit_compile(t->code[k], PCRE2_JIT_COMPLETE); /* optional: falls back to the interpreter */
    return SN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * llama.cpp's hand-written splitters. Input: code points cp[0..n) already cut into chunks (lens in
 * `in`); output: the finer pieces (lengths in code points) in `out`. */

typedef struct {
    const uint32_t *cp;
    size_t ini, end, prev;
    uvec *out;
    bool oom;
} splitter;

static inline uint32_t sp_cp(const splitter *s, size_t pos) {
    return (pos >= s->ini && pos < s->end) ? s->cp[pos] : OOR;
}
static inline uint16_t sp_fl(const splitter *s, size_t pos) {
    return (pos >= s->ini && pos < s->end) ? sn_tok_cp_flags(s->cp[pos]) : 0;
}
static inline size_t sp_add(splitter *s, size_t end) {
    size_t len = end - s->prev;
    if (len > 0 && !uvec_push(s->out, (uint32_t)len)) s->oom = true;
    s->prev = end;
    return len;
}
static inline uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

#define F_WS SN_UCD_SPACE
#define F_L SN_UCD_LETTER
#define F_N SN_UCD_NUMBER
#define F_M SN_UCD_MARK

/* 's|'t|'re|'ve|'m|'ll|'d (case-folded when fold): returns the match length or 0. */
static size_t sp_contraction(const splitter *s, size_t pos, bool fold) {
    if (s->cp[pos] != '\'' || pos + 1 >= s->end) return 0;
    uint32_t a = sp_cp(s, pos + 1);
    if (fold) a = ascii_lower(a);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 < s->end) {
        uint32_t b = sp_cp(s, pos + 2);
        if (fold) b = ascii_lower(b);
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    return 0;
}

/* A contraction at *pos (sp_contraction) becomes a piece of its own and *pos moves past it;
 * returns whether there was one. */
static bool sp_take_contraction(splitter *s, size_t *pos, bool fold) {
    const size_t cl = sp_contraction(s, *pos, fold);
    if (cl) *pos += sp_add(s, *pos + cl);
    return cl != 0;
}

static void split_gpt2(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        if (sp_take_contraction(s, &pos, false)) continue;
        uint32_t c = sp_cp(s, pos);
        uint16_t f = sp_fl(s, pos);
        uint16_t f2 = (c == ' ') ? sp_fl(s, pos + 1) : f;
        if (f2 & F_L) {
            pos += (c == ' ');
            while (f2 & F_L) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        if (f2 & F_N) {
            pos += (c == ' ');
            while (f2 & F_N) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        if (!(f2 & (F_WS | F_L | F_N)) && f2) {
            pos += (c == ' ');
            while (!(f2 & (F_WS | F_L | F_N)) && f2) f2 = sp_fl(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        size_t nws = 0;
        while (sp_fl(s, pos + nws) & F_WS) nws++;
        if (nws > 1 && sp_cp(s, pos + nws) != OOR) { pos += nws - 1; sp_add(s, pos); continue; }
        if (nws > 0) { pos += nws; sp_add(s, pos); continue; }
        sp_add(s, ++pos);
    }
}

/* llama3 (digits {1,3}), qwen2 (single digits) and qwen35 (letters absorb marks). */
static void split_llama3_like(splitter *s, int digits, bool marks) {
    const uint16_t LM = marks ? (F_L | F_M) : F_L;
    size_t pos = s->ini;
    while (pos < s->end) {
        if (sp_take_contraction(s, &pos, true)) continue;
        uint32_t c = sp_cp(s, pos);
        uint16_t f = sp_fl(s, pos);
        /* [^\r\n\p{L}\p{N}]?\p{L}+ */
        if (!(c == '\r' || c == '\n' || (f & F_N))) {
            if ((f & LM) || (sp_fl(s, pos + 1) & LM)) {
                pos++;
                while (sp_fl(s, pos) & LM) pos++;
                sp_add(s, pos);
                continue;
            }
        }
        /* \p{N}{1,3} or \p{N} */
        if (f & F_N) {
            if (digits == 1) {
                pos++;
                sp_add(s, pos);
                continue;
            }
            size_t ini = pos;
            while (sp_fl(s, pos) & F_N) {
                if (++pos - ini >= 3) { sp_add(s, pos); ini = pos; }
            }
            sp_add(s, pos);
            continue;
        }
        /* <space>?[^\s\p{L}\p{N}]+[\r\n]* (the first test looks at this code point's flags) */
        uint16_t f2 = (c == ' ') ? sp_fl(s, pos + 1) : f;
        if (!(f2 & (F_WS | LM | F_N)) && f) {
            pos += (c == ' ');
            while (!(f2 & (F_WS | LM | F_N)) && f2) f2 = sp_fl(s, ++pos);
            uint32_t c2 = sp_cp(s, pos);
            while (c2 == '\r' || c2 == '\n') c2 = sp_cp(s, ++pos);
            sp_add(s, pos);
            continue;
        }
        size_t nws = 0, last_rn = 0;
        while (sp_fl(s, pos + nws) & F_WS) {
            uint32_t c2 = sp_cp(s, pos + nws);
            if (c2 == '\r' || c2 == '\n') last_rn = pos + nws + 1;
            nws++;
        }
        if (last_rn > 0) { pos = last_rn; sp_add(s, pos); continue; }         /* \s*[\r\n]+ */
        if (nws > 1 && sp_cp(s, pos + nws) != OOR) { pos += nws - 1; sp_add(s, pos); continue; }
        if (nws > 0) { pos += nws; sp_add(s, pos); continue; }                /* \s+ */
        sp_add(s, ++pos);
    }
}

/* llama.cpp's AFMoE / tiny_aya digit grouping: a run of \p{N} is cut into len%3 leading digits and
 * then threes, counted from the right; the text before a run is glued to the run's first group
 * (llama.cpp emits from the previous cut), and the text after the last run is one piece. */
static void split_digits3(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        if (!(sp_fl(s, pos) & F_N)) { pos++; continue; }
        size_t first = pos, cnt = 0;
        while (pos < s->end && (sp_fl(s, pos) & F_N)) { cnt++; pos++; }
        size_t cur = first, rem = cnt % 3;
        if (rem) { sp_add(s, cur + rem); cur += rem; }
        while (cur < first + cnt) { sp_add(s, cur + 3); cur += 3; }
    }
    if (s->prev < s->end) sp_add(s, s->end);
}

static void split_newlines(splitter *s) {
    size_t pos = s->ini;
    while (pos < s->end) {
        bool nl = s->cp[pos] == '\n';
        while (pos < s->end && (s->cp[pos] == '\n') == nl) pos++;
        sp_add(s, pos);
    }
}

/* One regex pass through PCRE2 over a subject with one or more bytes per code point; map[b] is the
 * code point index of subject byte b (map[len] = n). */
static int split_pcre(const pcre2_code *code, const char *subj, const size_t *bstart,
                      const size_t *map, const uvec *in, uvec *out) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_jit_stack *js = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL); /* grows on demand */
    if (!md || !mc || !js) {
        pcre2_match_data_free(md); pcre2_match_context_free(mc); pcre2_jit_stack_free(js);
        return PCRE2_ERROR_NOMEMORY;
    }
    pcre2_jit_stack_assign(mc, NULL, js);
    int err = 0;
    bool ok = true;
    size_t start = 0; /* in code points */
    for (size_t c = 0; c < in->n && ok; c++) {
        size_t clen = in->v[c];
        size_t b0 = bstart[start], b1 = bstart[start + clen];
        const char *sub = subj + b0;
        size_t sublen = b1 - b0;
        size_t at = 0, last = 0; /* byte offsets within sub */
        uint32_t flags = 0;
        while (at <= sublen) {
            int rc = pcre2_match(code, (PCRE2_SPTR)sub, sublen, at, flags, md, mc);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) { err = rc; ok = false; break; } /* limits */
            if (rc < 0) {
                if (flags == 0) break; /* no more matches */
                /* empty match was last: step one code point and search normally */
                flags = 0;
                if (at >= sublen) break;
                size_t cpi = map[b0 + at];
                at = bstart[cpi + 1] - b0;
                continue;
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t ms = ov[0], me = ov[1];
            size_t cms = map[b0 + ms] - start, cme = map[b0 + me] - start, clast = map[b0 + last] - start;
            if (cms > clast) ok = ok && uvec_push(out, (uint32_t)(cms - clast));
            if (cme > cms) ok = ok && uvec_push(out, (uint32_t)(cme - cms));
            last = me;
            at = me;
            flags = (me == ms) ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
            if (!ok) break;
        }
        size_t clast = map[b0 + last] - start;
        if (clast < clen) ok = ok && uvec_push(out, (uint32_t)(clen - clast));
        start += clen;
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    pcre2_jit_stack_free(js);
    return ok ? 0 : (err ? err : PCRE2_ERROR_NOMEMORY);
}

/* Splits cp[0..n) into pre-tokens (lengths in code points) with the tokenizer's regex list. */
sn_status sn_pretok_split(const sn_pretok *t, const uint32_t *cp, size_t n, uvec *pieces, sn_err *err) {
    uvec cur = {0}, nxt = {0};
    char *subj = NULL;
    size_t *bstart = NULL;
    size_t *map = NULL;
    sn_status st = SN_OK;
    if (!uvec_push(&cur, (uint32_t)n)) goto oom;
    for (int k = 0; k < t->n_rx; k++) {
        nxt.n = 0;
        rx_kind kind = t->kind[k];
        if (kind == RX_COLLAPSED || kind == RX_UTF) {
            /* build the subject for this kind (cheap compared to matching) */
            size_t cap = kind == RX_COLLAPSED ? n + 1 : n * 4 + 1;
            free(subj); free(bstart); free(map);
            subj = malloc(cap);
            bstart = malloc((n + 1) * sizeof *bstart);
            map = malloc((cap + 1) * sizeof *map);
            if (!subj || !bstart || !map) goto oom;
            size_t b = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t c = cp[i];
                bstart[i] = b;
                if (kind == RX_COLLAPSED) {
                    char ch;
                    if (c < 128) ch = (char)c;
                    else {
                        uint16_t f = sn_tok_cp_flags(c);
                        if (f & SN_UCD_SPACE) ch = 0x0B;
                        else switch (f & SN_UCD_CATEGORY_MASK) {
                            case SN_UCD_NUMBER: ch = (char)0xD1; break;
                            case SN_UCD_LETTER: ch = (char)0xD2; break;
                            case SN_UCD_PUNCT: ch = (char)0xD3; break;
                            case SN_UCD_MARK: ch = (char)0xD4; break;
                            case SN_UCD_SYMBOL: ch = (char)0xD5; break;
                            default: ch = (char)0xD0; break;
                        }
                    }
                    map[b] = i;
                    subj[b++] = ch;
                } else {
                    if (c > 0x7F && (sn_tok_cp_flags(c) & SN_UCD_SPACE)) c = 0x0B;
                    if (c >= 0xD800 && c <= 0xDFFF) c = t->surrogate[k]; /* keep PCRE2 UTF valid */
                    else if (c > 0x10FFFF) c = 0xFFFD; /* unreachable: rejected before */
                    char tmp[4];
                    int l = sn_utf8_put(c, tmp);
                    for (int j = 0; j < l; j++) { map[b] = i; subj[b++] = tmp[j]; }
                }
            }
            bstart[n] = b;
            map[b] = n;
            int rc = split_pcre(t->code[k], subj, bstart, map, &cur, &nxt);
            if (rc == PCRE2_ERROR_NOMEMORY) goto oom;
            if (rc) {
                PCRE2_UCHAR msg[256];
                pcre2_get_error_message(rc, msg, sizeof msg);
                st = sn_err_set(err, SN_EINVAL, "tokenizer: pre-tokenizer regex %d failed on this text: %s", k,
                                (const char *)msg);
                goto done;
            }
        } else {
            splitter s = {.cp = cp, .out = &nxt};
            size_t start = 0;
            for (size_t c = 0; c < cur.n; c++) {
                s.ini = s.prev = start;
                s.end = start + cur.v[c];
                switch (kind) {
                    case RX_CUSTOM_GPT2: split_gpt2(&s); break;
                    case RX_CUSTOM_LLAMA3: split_llama3_like(&s, 3, false); break;
                    case RX_CUSTOM_QWEN2: split_llama3_like(&s, 1, false); break;
                    case RX_CUSTOM_QWEN35: split_llama3_like(&s, 1, true); break;
                    case RX_CUSTOM_DIGITS3: split_digits3(&s); break;
                    default: split_newlines(&s); break;
                }
                start = s.end;
            }
            if (s.oom) goto oom;
        }
        uvec tmp = cur; cur = nxt; nxt = tmp;
    }
    *pieces = cur;
    cur.v = NULL;
    goto done;
oom:
    st = sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
done:
    free(cur.v); free(nxt.v); free(subj); free(bstart); free(map);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * construction */

/* Whether word is one of the space-separated words of names. */
static int names_has(const char *names, const char *word) {
    const size_t n = strlen(word);
    for (const char *p = names;; p++) {
        const size_t len = strcspn(p, " ");
        if (len == n && !memcmp(p, word, n)) return 1;
        p += len;
        if (!*p) return 0;
    }
}

sn_status sn_pretok_new(const char *pre, sn_pretok **out, unsigned *flags, sn_err *err) {
    *out = NULL;
    const pre_row *row = NULL;
    if (!pre || !*pre) row = &PRE_TABLE[0]; /* llama.cpp warns and uses "default" */
    for (size_t i = 0; !row && i < sizeof PRE_TABLE / sizeof PRE_TABLE[0]; i++)
        if (names_has(PRE_TABLE[i].names, pre)) row = &PRE_TABLE[i];
    if (!row) {
        for (size_t i = 0; i < sizeof PRE_UNSUPPORTED / sizeof PRE_UNSUPPORTED[0]; i++)
            if (!strcmp(PRE_UNSUPPORTED[i], pre))
                return sn_err_set(err, SN_EUNSUPPORTED, "tokenizer: pre-tokenizer '%s' is not implemented", pre);
        return sn_err_set(err, SN_EFORMAT, "tokenizer: unknown pre-tokenizer type '%s' (tokenizer.ggml.pre)", pre);
    }
    sn_pretok *t = calloc(1, sizeof *t);
    if (!t) return sn_err_set(err, SN_ENOMEM, "tokenizer: out of memory");
    for (int k = 0; RX_SETS[row->rx][k]; k++) {
        sn_status st = rx_compile(t, k, RX_SETS[row->rx][k], err);
        if (st) { sn_pretok_free(t); return st; }
        t->n_rx = k + 1;
    }
    *flags = row->flags;
    *out = t;
    return SN_OK;
}

void sn_pretok_free(sn_pretok *t) {
    if (!t) return;
    for (int k = 0; k < MAX_RX; k++) pcre2_code_free(t->code[k]);
    free(t);
}
