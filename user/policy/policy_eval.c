/* SPDX-License-Identifier: MIT */
/*
 * The list keys of the guarded eval (eval-syntax, eval-call, eval-attribute, eval-import,
 * eval-magic) as py-sandboxes' eval_rules._parse_list_value() checks them: an optional
 * leading DENY:, then a comma list of tokens, none empty; eval-syntax takes only its groups
 * and the names of Python's ast node classes, and no pattern.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy_eval.h"

/* eval_rules.SYNTAX_GROUPS */
static const char *const SYNTAX_GROUPS[] = {
	"arith",     "compare", "conditional", "loop",	    "comprehension", "assign",
	"func",	     "async",	"class",       "exception", "context",	     "import",
	"subscript", "fstring", "tstring",     "yield",
};

/*
 * The node classes of Python's ast module, CPython 3.10 to 3.14 together (py-sandboxes asks
 * the running interpreter; a profile meant to be portable uses the common ones), without
 * the deprecated aliases eval_rules._DEPRECATED_NODES refuses.
 */
static const char *const AST_NODES[] = {
	"AST",
	"mod",
	"Module",
	"Interactive",
	"Expression",
	"FunctionType",
	"stmt",
	"FunctionDef",
	"AsyncFunctionDef",
	"ClassDef",
	"Return",
	"Delete",
	"Assign",
	"TypeAlias",
	"AugAssign",
	"AnnAssign",
	"For",
	"AsyncFor",
	"While",
	"If",
	"With",
	"AsyncWith",
	"Match",
	"Raise",
	"Try",
	"TryStar",
	"Assert",
	"Import",
	"ImportFrom",
	"Global",
	"Nonlocal",
	"Expr",
	"Pass",
	"Break",
	"Continue",
	"expr",
	"BoolOp",
	"NamedExpr",
	"BinOp",
	"UnaryOp",
	"Lambda",
	"IfExp",
	"Dict",
	"Set",
	"ListComp",
	"SetComp",
	"DictComp",
	"GeneratorExp",
	"Await",
	"Yield",
	"YieldFrom",
	"Compare",
	"Call",
	"FormattedValue",
	"Interpolation",
	"JoinedStr",
	"TemplateStr",
	"Constant",
	"Attribute",
	"Subscript",
	"Starred",
	"Name",
	"List",
	"Tuple",
	"Slice",
	"expr_context",
	"Load",
	"Store",
	"Del",
	"AugLoad",
	"AugStore",
	"boolop",
	"And",
	"Or",
	"operator",
	"Add",
	"Sub",
	"Mult",
	"MatMult",
	"Div",
	"Mod",
	"Pow",
	"LShift",
	"RShift",
	"BitOr",
	"BitXor",
	"BitAnd",
	"FloorDiv",
	"unaryop",
	"Invert",
	"Not",
	"UAdd",
	"USub",
	"cmpop",
	"Eq",
	"NotEq",
	"Lt",
	"LtE",
	"Gt",
	"GtE",
	"Is",
	"IsNot",
	"In",
	"NotIn",
	"comprehension",
	"excepthandler",
	"ExceptHandler",
	"arguments",
	"arg",
	"keyword",
	"alias",
	"withitem",
	"match_case",
	"pattern",
	"MatchValue",
	"MatchSingleton",
	"MatchSequence",
	"MatchMapping",
	"MatchClass",
	"MatchStar",
	"MatchAs",
	"MatchOr",
	"type_ignore",
	"TypeIgnore",
	"type_param",
	"TypeVar",
	"ParamSpec",
	"TypeVarTuple",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool in(const char *tok, size_t n, const char *const *list, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (strlen(list[i]) == n && !strncmp(list[i], tok, n))
			return true;
	return false;
}

/*
 * How alike two names are, as difflib's ratio (py-sandboxes' _suggest uses
 * get_close_matches): 2 * common / total, the common part counted as the longest common
 * subsequence. 0 for names too long to matter.
 */
static double similarity(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned short d[65][65];

	if (la > 64 || lb > 64 || !la || !lb)
		return 0;
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++)
			d[i][j] = !i || !j		      ? 0
				  : a[i - 1] == b[j - 1]      ? d[i - 1][j - 1] + 1
				  : d[i - 1][j] > d[i][j - 1] ? d[i - 1][j]
							      : d[i][j - 1];
	return 2.0 * d[la][lb] / (double)(la + lb);
}

/* The known syntax token most like a mistyped one (difflib's 0.6 cutoff), or NULL. */
static const char *closest_syntax(const char *tok)
{
	const char *best = NULL;
	double best_r = 0.6;

	for (size_t i = 0; i < N(SYNTAX_GROUPS) + N(AST_NODES); i++) {
		const char *k = i < N(SYNTAX_GROUPS) ? SYNTAX_GROUPS[i]
						     : AST_NODES[i - N(SYNTAX_GROUPS)];
		double r = similarity(k, tok);

		if (r >= best_r + (best ? 1e-9 : 0)) {
			best = k;
			best_r = r;
		}
	}
	return best;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

char *policy_eval_list_error(const char *key, const char *v, size_t *off)
{
	const bool syntax = !strcmp(key, "eval-syntax");
	const char *t = v;
	char *msg = NULL;

	if (!strncmp(t, "DENY:", 5))
		t += 5;
	for (;;) {
		size_t n = strcspn(t, ",");
		const char *s = t;
		size_t sn = n;

		while (sn && blank(*s))
			s++, sn--;
		while (sn && blank(s[sn - 1]))
			sn--;
		*off = (size_t)(s - v);
		if (!sn)
			return strdup("empty target: each comma-separated item must be a name");
		if (sn >= 5 && !strncmp(s, "DENY:", 5)) {
			if (asprintf(&msg,
				     "DENY: applies to a whole line: put %s=%.*s on a line of "
				     "its own",
				     key, (int)(sn > 80 ? 80 : sn), s) < 0)
				msg = NULL;
			return msg ? msg : strdup("DENY: applies to a whole line");
		}
		if (syntax && memchr(s, '*', sn))
			return strdup("eval-syntax takes groups or ast node names, no pattern: the "
				      "vocabulary is finite");
		if (syntax && !in(s, sn, SYNTAX_GROUPS, N(SYNTAX_GROUPS)) &&
		    !in(s, sn, AST_NODES, N(AST_NODES))) {
			char *tok = strndup(s, sn);
			const char *hint = tok ? closest_syntax(tok) : NULL;

			if (!tok || asprintf(&msg,
					     "unknown syntax token '%.60s'%s%s%s: expected a group "
					     "(arith, compare, conditional, loop, comprehension, "
					     "assign, func, async, class, exception, context, "
					     "import, subscript, fstring, tstring, yield) or the "
					     "name of an ast node class (BinOp, Call, ...)",
					     tok, hint ? " (closest known token: '" : "",
					     hint ? hint : "", hint ? "')" : "") < 0)
				msg = NULL;
			free(tok);
			return msg ? msg : strdup("unknown syntax token");
		}
		t += n;
		if (!*t++)
			return NULL;
	}
}

/* ast node classes that exist on some of CPython 3.10-3.14 only. */
static const struct {
	const char *name, *note;
} VERSIONED[] = {
	{ "TryStar", "Python 3.11 and later" },	    { "TypeAlias", "Python 3.12 and later" },
	{ "type_param", "Python 3.12 and later" },  { "TypeVar", "Python 3.12 and later" },
	{ "ParamSpec", "Python 3.12 and later" },   { "TypeVarTuple", "Python 3.12 and later" },
	{ "TemplateStr", "Python 3.14 and later" }, { "Interpolation", "Python 3.14 and later" },
	{ "AugLoad", "Python 3.13 and earlier" },   { "AugStore", "Python 3.13 and earlier" },
};

const char *policy_eval_versioned(const char *v, const char **note)
{
	const char *t = v;

	if (!strncmp(t, "DENY:", 5))
		t += 5;
	for (;;) {
		size_t n = strcspn(t, ","), sn = n;
		const char *s = t;

		while (sn && blank(*s))
			s++, sn--;
		while (sn && blank(s[sn - 1]))
			sn--;
		for (size_t i = 0; i < N(VERSIONED); i++)
			if (strlen(VERSIONED[i].name) == sn && !strncmp(VERSIONED[i].name, s, sn)) {
				*note = VERSIONED[i].note;
				return VERSIONED[i].name;
			}
		t += n;
		if (!*t++)
			return NULL;
	}
}
