/* grammar.c — the public grammar functions (ngpt.h, "Grammars"): a GBNF
 * text or a JSON Schema (schema.c turns it into GBNF) compiled against a
 * vocabulary: parsed (gbnf.c), made into automata (automaton.c), and each
 * automaton state's tokens indexed (mask.c). */
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "grammar/grammar.h"
#include "grammar/schema.h"

void ngpt_grammar_free(ngpt_grammar *g)
{
    NGPT_FPMODE_SCOPE;
    if (!g) return;
    ngpt_automaton_free(&g->a);
    ngpt_tok_trie_free(g->own_trie);
    free(g->idx);
    free(g->lists);
    free(g->checks);
    free(g->text);
    free(g);
}

/* GBNF text compiled against tok (NULL: bytes). Bare messages. */
static ngpt_status compile(ngpt_grammar **out, const ngpt_tokenizer *tok, const char *text,
                           size_t len)
{
    ngpt_grammar *g = calloc(1, sizeof *g);
    if (!g) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the grammar");
    g->tok = tok;
    g->text = malloc(len + 1);
    if (!g->text) {
        ngpt_grammar_free(g);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the grammar");
    }
    memcpy(g->text, text, len);
    g->text[len] = '\0';
    g->text_len = len;
    ngpt_gast ast;
    ngpt_status st = ngpt_gbnf_parse(text, len, &ast);
    if (!st) st = ngpt_automaton_build(&ast, tok && tok->has_absent ? tok->absent : NULL, &g->a);
    ngpt_gbnf_free(&ast);
    if (!st) {
        if (tok) {
            g->trie = ngpt_tok_trie_of(tok);
            g->n_vocab = tok->n_tokens;
        } else {
            g->trie = g->own_trie = ngpt_tok_trie_bytes(256);
            g->n_vocab = 256;
            if (!g->own_trie) ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the byte trie");
        }
        st = g->trie ? ngpt_grammar_index(g) : NGPT_ERR_NO_MEMORY;
    }
    if (st) {
        ngpt_grammar_free(g);
        return st;
    }
    *out = g;
    return NGPT_OK;
}

ngpt_status ngpt_grammar_parse(ngpt_grammar **grammar, const ngpt_tokenizer *tok, const char *text,
                               size_t len)
{
    NGPT_FPMODE_SCOPE;
    if (!grammar || (!text && len > 0))
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_grammar_parse: NULL argument");
    *grammar = NULL;
    return ngpt_prefixed("ngpt_grammar_parse", compile(grammar, tok, text ? text : "", len));
}

ngpt_status ngpt_grammar_from_json_schema(ngpt_grammar **grammar, const ngpt_tokenizer *tok,
                                          const char *schema, size_t len)
{
    NGPT_FPMODE_SCOPE;
    if (!grammar || !schema)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_grammar_from_json_schema: NULL argument");
    *grammar = NULL;
    char *gbnf = NULL;
    size_t n = 0;
    ngpt_status st = ngpt_schema_to_gbnf(schema, len, &gbnf, &n);
    if (!st) st = compile(grammar, tok, gbnf, n);
    free(gbnf);
    return ngpt_prefixed("ngpt_grammar_from_json_schema", st);
}

ngpt_status ngpt_grammar_text(const ngpt_grammar *g, const char **text, size_t *len)
{
    NGPT_FPMODE_SCOPE;
    if (!g || !text) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_grammar_text: NULL argument");
    *text = g->text;
    if (len) *len = g->text_len;
    return NGPT_OK;
}
