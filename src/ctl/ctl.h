/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl: the client side of Sluice's management interfaces (control path,
 * tools only; DPDK-free).  sluicectl is built on it; tests may use it too.
 *
 * Four parts, each usable alone:
 *
 *  1. A blocking OpenFlow 1.3 client (sl_ctl_of_*): connects to a switch's
 *     OpenFlow listener (unix:PATH, tcp:HOST[:PORT] or, with TLS,
 *     ssl:HOST[:PORT]), exchanges hellos,
 *     sends requests built with the ofp codec and collects the replies that
 *     carry the request's xid, multipart continuations (OFPMPF_REPLY_MORE)
 *     included.  While it waits it answers the switch's echo requests and
 *     ignores asynchronous messages (packet-in, port-status, flow-removed).
 *     An OFPT_ERROR for the request is a failure that names the error with
 *     sl_ofp_error_name().  Batches (a flow file) are sent back to back and
 *     closed by one barrier; every error before the barrier reply is
 *     reported with the xid of the message it refused.
 *
 *  2. A DPDK telemetry client (sl_ctl_tel_*), the protocol of
 *     usertools/dpdk-telemetry.py: an AF_UNIX SOCK_SEQPACKET socket; on
 *     connect the server sends a JSON greeting with "max_output_len"; each
 *     request is one packet "/cmd[,params]" and gets one packet back, a JSON
 *     object {"/cmd": VALUE}.  Sluice's commands and their replies are
 *     specified in docs/telemetry.md: a request that cannot be served
 *     answers {"error": TEXT} (at the top level or as VALUE).
 *
 *  3. A small strict JSON reader (sl_ctl_json_*) for those replies: RFC 8259
 *     with no extensions (no comments, trailing commas, NaN, single quotes,
 *     leading zeros), UTF-8 checked, integers kept exactly up to 64 bits
 *     (unsigned) alongside their double value, limits on input size,
 *     nesting depth and node count.  The input is never trusted: every
 *     failure is an error message with the byte offset, never a crash.
 *
 *  4. Output helpers: aligned text tables (sl_ctl_table_*), a streaming JSON
 *     writer (sl_ctl_jw_*) and sl_ctl_sanitize() for text that came from the
 *     switch (so a hostile port name cannot send escape sequences to the
 *     operator's terminal).
 *
 * Errors: functions return 0 or -errno and, where they take (err,
 * err_size), write a one-line message naming what was wrong (the target,
 * the socket path, the byte offset...) without a trailing newline.
 *
 * Thread safety: no global state.  Every function is safe from any thread
 * on its own objects ("any thread"); an object (connection, document,
 * table, writer) belongs to one thread at a time.  The clients block the
 * calling thread in poll() for at most their timeout per wait: they are for
 * tools, never for the switch's own threads.
 */
#ifndef SL_CTL_H
#define SL_CTL_H

#include "../core/core.h"
#include "../ofp/ofp.h"

#include <stdarg.h>

/*
 * ============================================================================
 * Where a switch instance listens
 * ============================================================================
 */

/** Instance name used when none is given. */
#define SL_CTL_DEFAULT_NAME "sluice"
/** TCP port of "tcp:HOST" targets without a port (IANA OpenFlow). */
#define SL_CTL_OF_PORT 6653

/**
 * The OpenFlow management socket of instance @name: "unix:/run/sluice/NAME.mgmt".
 *
 * @param name  Instance name: 1..64 characters of [A-Za-z0-9_.-], not
 *              starting with '.' (it becomes a file name).
 * @return 0, or -EINVAL (bad name) / -ENAMETOOLONG (@buf too small).
 *         Any thread.
 */
int sl_ctl_default_target(const char *name, char *buf, size_t size);

/**
 * The DPDK telemetry socket of instance @name, whose EAL --file-prefix is
 * @name: DPDK's runtime directory rule, "/var/run/dpdk/NAME/dpdk_telemetry.v2"
 * for root, "$XDG_RUNTIME_DIR/dpdk/NAME/..." for other users, "/tmp/dpdk/NAME/..."
 * when XDG_RUNTIME_DIR is unset.
 *
 * @return 0, -EINVAL (bad name, as sl_ctl_default_target), -ENAMETOOLONG.
 *         Any thread (reads the environment).
 */
int sl_ctl_default_telemetry(const char *name, char *buf, size_t size);

/*
 * ============================================================================
 * 1. OpenFlow 1.3 client
 * ============================================================================
 */

struct sl_ctl_of;

/**
 * Connect to a switch and exchange hellos.
 *
 * @param target      "unix:PATH" or "tcp:HOST[:PORT]" (HOST a name, an IPv4
 *                    address or "[IPv6]"; PORT default SL_CTL_OF_PORT).
 * @param timeout_ms  Longest wait for the connection and for the hello.
 * @param out         Out: the connection.
 * @return 0; -EINVAL (bad target syntax); -errno of socket()/connect()
 *         (-ENOENT: no such socket file, -ECONNREFUSED: nobody listens,
 *         -EACCES ...); -EHOSTUNREACH when a host name does not resolve;
 *         -ETIMEDOUT; -ECONNRESET (closed during the hello); -EPROTO (the
 *         peer does not speak OpenFlow 1.3, or refused the hello).
 *         Any thread.
 */
int sl_ctl_of_open(const char *target, int timeout_ms, struct sl_ctl_of **out, char *err,
		   size_t err_size);

struct sl_tls_ctx;

/**
 * sl_ctl_of_open(), plus ssl:HOST[:PORT] targets (a pssl: listener): the
 * TLS handshake with @tls (src/tls/tls.h: this end's key and certificate,
 * the CA the switch's certificate must chain to) runs before the hellos,
 * within @timeout_ms.
 *
 * @param tls  Context for ssl: targets; NULL refuses them (-EINVAL).
 * @return as sl_ctl_of_open(); -EPROTO when the handshake fails (@err
 *         gives TLS's reason, e.g. "certificate verify failed (...)" or
 *         "tlsv1 alert unknown ca" when the switch refused our certificate).
 *         Any thread.
 */
int sl_ctl_of_open_tls(const char *target, struct sl_tls_ctx *tls, int timeout_ms,
		       struct sl_ctl_of **out, char *err, size_t err_size);

/** Close a connection (NULL-safe).  Any thread. */
void sl_ctl_of_close(struct sl_ctl_of *c);

/** A fresh transaction id for the next request (never 0).  Any thread. */
uint32_t sl_ctl_of_next_xid(struct sl_ctl_of *c);

/** Change the timeout used by later waits (milliseconds).  Any thread. */
void sl_ctl_of_set_timeout(struct sl_ctl_of *c, int timeout_ms);

/**
 * Called with each reply message of a request (whole, length-checked
 * header, version 1.3).  Return 0 to go on, or a negative errno to stop:
 * sl_ctl_of_request() then returns it.
 */
typedef int (*sl_ctl_of_reply_fn)(void *arg, const uint8_t *msg, size_t len);

/**
 * Send one request and collect its replies: every message with the
 * request's xid goes to @fn; a multipart reply completes with the message
 * that has OFPMPF_REPLY_MORE clear, any other reply with its first message.
 * Messages with other xids are ignored; echo requests are answered.
 *
 * @param req      One encoded message (its xid is read from it).
 * @param fn       Reply callback (may be NULL: the reply is awaited only).
 * @param refused  Out, may be NULL: the error when -EREMOTEIO is returned.
 * @return 0; -EREMOTEIO when the switch answered OFPT_ERROR (@err: its
 *         name, type and code, e.g. "OFPBRC_BAD_TABLE_ID (type 1, code 9)");
 *         -ETIMEDOUT (no progress for the timeout: it restarts whenever bytes
 *         are sent or a message for this request arrives, so a long dump
 *         does not time out while it flows); -ECONNRESET
 *         (the switch closed the connection); -EBADMSG (a malformed message:
 *         wrong version, length below 8); -EINVAL (@req is not one
 *         message); -errno of send/recv; or @fn's negative return.
 *         Any thread.
 */
int sl_ctl_of_request(struct sl_ctl_of *c, const void *req, size_t len, sl_ctl_of_reply_fn fn,
		      void *arg, struct sl_ofp_error *refused, char *err, size_t err_size);

/**
 * Called for each OFPT_ERROR received during a batch.
 *
 * @param xid       The error's xid: that of the message it refused.
 * @param e         Type and code (sl_ofp_error_name names them).
 * @param data      The error's data (the start of the refused message), or NULL.
 */
typedef void (*sl_ctl_of_error_fn)(void *arg, uint32_t xid, const struct sl_ofp_error *e,
				   const uint8_t *data, size_t data_len);

/**
 * Send a batch of messages followed by one barrier request, and wait for the
 * barrier reply.  OpenFlow processes the batch in order, so when the reply
 * arrives every message has been applied or refused.  Sending and receiving
 * are interleaved, so a batch of any size cannot deadlock against a switch
 * that is busy writing errors back.
 *
 * @param msgs      Encoded messages back to back (sl_ofp_buf contents; may
 *                  be empty: then only the barrier is sent).
 * @param on_error  Called for each OFPT_ERROR before the barrier reply, or NULL.
 * @param n_errors  Out, may be NULL: how many errors arrived.
 * @return 0 once the barrier reply arrived (errors or not); -ETIMEDOUT,
 *         -ECONNRESET, -EBADMSG, -EINVAL (@msgs not whole messages), -errno.
 *         Any thread.
 */
int sl_ctl_of_batch(struct sl_ctl_of *c, const void *msgs, size_t len, sl_ctl_of_error_fn on_error,
		    void *arg, unsigned *n_errors, char *err, size_t err_size);

/**
 * Format an OpenFlow error as "NAME (type T, code C)", with the experimenter
 * id for experimenter errors.  @return snprintf-style length.  Any thread.
 */
int sl_ctl_of_error_format(const struct sl_ofp_error *e, char *buf, size_t size);

/*
 * ============================================================================
 * 2. DPDK telemetry client
 * ============================================================================
 */

/** Longest request DPDK's telemetry server reads (its buffer is 1024 bytes). */
#define SL_CTL_TEL_REQUEST_MAX 1023
/** Longest command name it matches (MAX_CMD_LEN 56, NUL included). */
#define SL_CTL_TEL_CMD_MAX 55

struct sl_ctl_tel;
struct sl_ctl_json_doc;
struct sl_ctl_json;

/**
 * Connect to a telemetry socket and read its greeting.
 *
 * @param path        The socket (sl_ctl_default_telemetry()).
 * @param timeout_ms  Longest wait for the greeting and, later, each reply.
 * @return 0; -ENAMETOOLONG (path longer than sun_path); -errno of
 *         socket()/connect() (-ENOENT, -ECONNREFUSED, -EACCES ...);
 *         -ETIMEDOUT; -ECONNRESET (closed before the greeting: DPDK does
 *         that when it has too many clients); -EBADMSG (the greeting is
 *         not the JSON object expected).  Any thread.
 */
int sl_ctl_tel_open(const char *path, int timeout_ms, struct sl_ctl_tel **out, char *err,
		    size_t err_size);

/** Close (NULL-safe).  Any thread. */
void sl_ctl_tel_close(struct sl_ctl_tel *t);

/** The greeting's "max_output_len": the largest reply the server sends. */
size_t sl_ctl_tel_max_output(const struct sl_ctl_tel *t);

/**
 * Send one raw request and return the reply's text as received.
 *
 * @param request  "/cmd" or "/cmd,params", 1..SL_CTL_TEL_REQUEST_MAX bytes.
 * @param reply    Out: malloc'd, NUL-terminated; the caller frees it.
 * @param len      Out, may be NULL: its length.
 * @return 0; -EINVAL (empty or too long request); -ETIMEDOUT; -ECONNRESET;
 *         -EMSGSIZE (a reply larger than max_output_len); -ENOMEM;
 *         -errno.  Any thread.
 */
int sl_ctl_tel_raw(struct sl_ctl_tel *t, const char *request, char **reply, size_t *len, char *err,
		   size_t err_size);

/**
 * Call a command and return its VALUE, the member of the reply named @cmd.
 *
 * @param cmd     "/sluice/ports" ...: starts with '/', no ',', at most
 *                SL_CTL_TEL_CMD_MAX characters.
 * @param params  Parameters (without the leading ','), or NULL.
 * @param doc     Out: the parsed reply; free with sl_ctl_json_free() (also
 *                after -EREMOTEIO and -EOPNOTSUPP; NULL after other errors).
 * @param value   Out: VALUE inside @doc.
 * @return 0; -EREMOTEIO when the reply is {"error": TEXT} at the top level
 *         or as VALUE (@err: TEXT); -EOPNOTSUPP when VALUE is null (DPDK's
 *         answer to an unknown command and to a command that failed);
 *         -EBADMSG (not JSON, not an object, no member @cmd); -EINVAL (bad
 *         @cmd or @params); and the sl_ctl_tel_raw() errors.  Any thread.
 */
int sl_ctl_tel_call(struct sl_ctl_tel *t, const char *cmd, const char *params,
		    struct sl_ctl_json_doc **doc, const struct sl_ctl_json **value, char *err,
		    size_t err_size);

/*
 * ============================================================================
 * 3. JSON reader
 * ============================================================================
 *
 * Thread safety: any thread; a parsed document is read-only and may be read
 * from several threads at once.
 */

/** JSON value types. */
enum sl_ctl_json_type {
	SL_CTL_JSON_NULL,
	SL_CTL_JSON_FALSE,
	SL_CTL_JSON_TRUE,
	SL_CTL_JSON_NUMBER,
	SL_CTL_JSON_STRING,
	SL_CTL_JSON_ARRAY,
	SL_CTL_JSON_OBJECT,
};

/**
 * One parsed value.  Nodes live in their document and are read-only; walk
 * an array or object with `for (v = x->child; v; v = v->next)`.
 */
struct sl_ctl_json {
	uint8_t type;                    /* enum sl_ctl_json_type */
	bool is_int;                     /* NUMBER: written without fraction or exponent and
	                                    within -2^63 .. 2^64-1: exact in @u / @negative */
	bool negative;                   /* NUMBER, is_int: the value is -u */
	const char *key;                 /* member name inside an object (decoded, NUL-terminated),
	                                    else NULL */
	size_t key_len;                  /* bytes of key (it may contain NUL from \u0000) */
	const char *str;                 /* STRING: decoded UTF-8, NUL-terminated; else NULL */
	size_t str_len;                  /* bytes of str */
	uint64_t u;                      /* NUMBER, is_int: magnitude */
	double d;                        /* NUMBER: value (rounded for big integers) */
	size_t n;                        /* ARRAY / OBJECT: number of children */
	const struct sl_ctl_json *child; /* ARRAY / OBJECT: first child */
	const struct sl_ctl_json *next;  /* next sibling, NULL for the last */
};

/** Parser limits; a zero field takes the default. */
struct sl_ctl_json_limits {
	size_t max_size;    /* input bytes (default 16 MiB) */
	unsigned max_depth; /* nesting of arrays/objects (default 64, at most 1024) */
	size_t max_nodes;   /* values (default 1,000,000) */
};

/**
 * Parse a complete JSON text (one value, white space around it allowed).
 *
 * @param text  The input; need not be NUL-terminated.
 * @param len   Its length in bytes.
 * @param lim   Limits, or NULL for the defaults.
 * @param out   Out: the document.
 * @param err   Out: "byte N: what" on failure.
 * @return 0; -EBADMSG (syntax, bad UTF-8, bad escape, lone surrogate,
 *         number out of double range, trailing data); -E2BIG (a limit);
 *         -ENOMEM.  Any thread.
 */
int sl_ctl_json_parse(const char *text, size_t len, const struct sl_ctl_json_limits *lim,
		      struct sl_ctl_json_doc **out, char *err, size_t err_size);

/** The document's top-level value (never NULL for a parsed document). */
const struct sl_ctl_json *sl_ctl_json_root(const struct sl_ctl_json_doc *doc);

/** Free a document (NULL-safe); every node of it becomes invalid. */
void sl_ctl_json_free(struct sl_ctl_json_doc *doc);

/**
 * The first member of object @obj named @key, or NULL (also when @obj is
 * NULL or not an object).  Linear in the object's size.
 */
const struct sl_ctl_json *sl_ctl_json_get(const struct sl_ctl_json *obj, const char *key);

/** @v as an unsigned integer: true for a non-negative integer NUMBER. */
bool sl_ctl_json_u64(const struct sl_ctl_json *v, uint64_t *out);
/** @v as a signed integer: true for an integer NUMBER within int64_t. */
bool sl_ctl_json_i64(const struct sl_ctl_json *v, int64_t *out);
/** @v as a double: true for any NUMBER. */
bool sl_ctl_json_double(const struct sl_ctl_json *v, double *out);
/** @v's string, or NULL when @v is NULL or not a STRING. */
const char *sl_ctl_json_str(const struct sl_ctl_json *v);

/** Member @key of @obj as u64, or @dflt when absent or not a non-negative integer. */
uint64_t sl_ctl_json_get_u64(const struct sl_ctl_json *obj, const char *key, uint64_t dflt);
/** Member @key of @obj as a string, or @dflt. */
const char *sl_ctl_json_get_str(const struct sl_ctl_json *obj, const char *key, const char *dflt);

/*
 * ============================================================================
 * 4. Output
 * ============================================================================
 *
 * Thread safety: any thread; a table or writer belongs to one thread at a time.
 */

/**
 * Copy @n bytes of untrusted text to @dst (size @size, always terminated),
 * replacing control characters, DEL and non-ASCII bytes with '?'.
 * @return bytes written (without the NUL).  Any thread.
 */
size_t sl_ctl_sanitize(char *dst, size_t size, const char *src, size_t n);

/**
 * Compact number for narrow columns: 999, 1.23k, 45.6M, 7.89G, 1.2T
 * (decimal SI prefixes, 3 significant digits).  @return @buf.  Any thread.
 */
char *sl_ctl_fmt_si(double v, char *buf, size_t size);

/** An aligned text table built row by row. */
struct sl_ctl_table;

/**
 * Create a table.
 *
 * @param headers  Column headings (copied).
 * @param n_cols   Number of columns, 1..64.
 * @param align    One character per column: 'l' left, 'r' right.
 * @return 0, -EINVAL, -ENOMEM.  Any thread.
 */
int sl_ctl_table_create(const char *const headers[], unsigned n_cols, const char *align,
			struct sl_ctl_table **out);
/** Destroy (NULL-safe). */
void sl_ctl_table_destroy(struct sl_ctl_table *t);
/**
 * Append the next cell (row-major order: after the last column a new row
 * starts).  The text is sanitized (sl_ctl_sanitize).  @return 0, -ENOMEM.
 */
int sl_ctl_table_add(struct sl_ctl_table *t, const char *text);
/** sl_ctl_table_add() with printf formatting. */
int sl_ctl_table_addf(struct sl_ctl_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** Rows added so far (a partial last row counts). */
unsigned sl_ctl_table_rows(const struct sl_ctl_table *t);
/**
 * Print the heading (left out when every heading is "") and the rows,
 * columns two spaces apart, each line prefixed with @indent spaces and
 * without trailing blanks.
 */
void sl_ctl_table_print(const struct sl_ctl_table *t, FILE *f, unsigned indent);

/** Deepest nesting the JSON writer handles. */
#define SL_CTL_JW_DEPTH_MAX 32

/**
 * A streaming JSON writer.  Inside an object every value takes a key;
 * inside an array and at the top level the key must be NULL.  Misuse (a
 * missing or extra key, unbalanced ends, nesting past SL_CTL_JW_DEPTH_MAX)
 * makes the sticky error -EINVAL; a write failure -EIO.  Strings are
 * escaped per RFC 8259 and invalid UTF-8 bytes become U+FFFD, so the output
 * is valid JSON whatever the input.
 */
struct sl_ctl_jw {
	FILE *f;
	bool pretty;                         /* newlines and two-space indentation */
	unsigned depth;                      /* open arrays/objects */
	bool is_object[SL_CTL_JW_DEPTH_MAX]; /* per level: object (true) or array */
	bool has_items[SL_CTL_JW_DEPTH_MAX]; /* per level: something written already */
	bool done;                           /* the top-level value is complete */
	int error;                           /* sticky: 0, -EINVAL, -EIO */
};

/** Start writing one JSON document to @f. */
void sl_ctl_jw_init(struct sl_ctl_jw *w, FILE *f, bool pretty);
void sl_ctl_jw_object_begin(struct sl_ctl_jw *w, const char *key);
void sl_ctl_jw_object_end(struct sl_ctl_jw *w);
void sl_ctl_jw_array_begin(struct sl_ctl_jw *w, const char *key);
void sl_ctl_jw_array_end(struct sl_ctl_jw *w);
/** A string value (NULL writes null). */
void sl_ctl_jw_string(struct sl_ctl_jw *w, const char *key, const char *s);
/** A string value of @n bytes (may contain NUL). */
void sl_ctl_jw_stringn(struct sl_ctl_jw *w, const char *key, const char *s, size_t n);
/** A string value with printf formatting. */
void sl_ctl_jw_stringf(struct sl_ctl_jw *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sl_ctl_jw_u64(struct sl_ctl_jw *w, const char *key, uint64_t v);
void sl_ctl_jw_i64(struct sl_ctl_jw *w, const char *key, int64_t v);
/** A number; NaN and infinities (not JSON) are written as null. */
void sl_ctl_jw_double(struct sl_ctl_jw *w, const char *key, double v);
void sl_ctl_jw_bool(struct sl_ctl_jw *w, const char *key, bool v);
void sl_ctl_jw_null(struct sl_ctl_jw *w, const char *key);
/** Copy a parsed value (integers exactly, strings re-escaped). */
void sl_ctl_jw_json(struct sl_ctl_jw *w, const char *key, const struct sl_ctl_json *v);
/**
 * Finish the document: a newline after the top-level value, flush.
 * @return 0, or the sticky error (-EINVAL also when values are still open
 *         or nothing was written).
 */
int sl_ctl_jw_finish(struct sl_ctl_jw *w);

#endif /* SL_CTL_H */
