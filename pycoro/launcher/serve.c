/* Handing a command line to a compile server (cli/server.py) as its
   Python client does (cli/client.py): the same request, `marshal`led, with
   this process's stdin, stdout and stderr; then this process ends as the
   worker did. The server is found by the serve index a Python client wrote
   after it was served (launch.py's write_serve_index): the socket, and the
   stamps of the compiler that server is. */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "launcher.h"

#define SERVE_FORMAT "pycoro-serve 1"   /* launch.py's SERVE_FORMAT */

extern char **environ;

/* ---- marshal's format (version 4), the little of it the request needs */

struct message {
    unsigned char *data;
    size_t size, capacity;
    int broken;   /* a string that is not UTF-8: Python would send it otherwise */
};

static void put(struct message *m, const void *data, size_t size) {
    if (m->size + size > m->capacity) {
        size_t capacity = (m->capacity ? m->capacity : 4096);
        while (capacity < m->size + size)
            capacity *= 2;
        unsigned char *larger = realloc(m->data, capacity);
        if (!larger) {
            m->broken = 1;
            return;
        }
        m->data = larger;
        m->capacity = capacity;
    }
    memcpy(m->data + m->size, data, size);
    m->size += size;
}

static void put_int(struct message *m, unsigned char type, int32_t value) {
    unsigned char bytes[5] = {type, value & 0xFF, (value >> 8) & 0xFF, (value >> 16) & 0xFF, (value >> 24) & 0xFF};
    put(m, bytes, 5);
}

static int is_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (extra == 9 || (extra && i + extra >= n) || (extra == 1 && c < 0xC2))
            return 0;
        for (size_t k = 1; k <= extra; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        if (extra == 2) {   /* no overlong form, no surrogate (Python's own decoder refuses both) */
            unsigned cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
            if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        } else if (extra == 3) {
            unsigned cp = ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6)
                          | (s[i + 3] & 0x3Fu);
            if (cp < 0x10000 || cp > 0x10FFFF)
                return 0;
        }
        i += extra + 1;
    }
    return 1;
}

static void put_text(struct message *m, const char *text, size_t size) {
    if (!is_utf8((const unsigned char *)text, size))
        m->broken = 1;
    put_int(m, 'u', (int32_t)size);
    put(m, text, size);
}

static void put_string(struct message *m, const char *text) {
    if (text)
        put_text(m, text, strlen(text));
    else
        put(m, "N", 1);
}

/* ---- the request */

/* The encodings and error handlers CPython 3.11 gives its standard streams
   (client.py sends them; config_get_stdio_errors): 0 where this launcher
   cannot tell them. `target`: the locale CPython coerces to, if any. */
static int python_stdio(const char *target, const char **encodings, const char **errors) {
    const char *io = getenv("PYTHONIOENCODING"), *utf8 = getenv("PYTHONUTF8");
    if ((io && *io) || (utf8 && *utf8))
        return 0;
    setlocale(LC_CTYPE, "");
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!ctype)
        return 0;
    /* the C and POSIX locales turn on the UTF-8 mode (PEP 540) */
    int utf8_mode = strcmp(ctype, "C") == 0 || strcmp(ctype, "POSIX") == 0;
    int utf8_codeset = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    /* surrogateescape in the UTF-8 mode, and in a coercion target's locale */
    int escape = utf8_mode || is_coercion_target(target ? target : ctype);
    setlocale(LC_CTYPE, "C");
    if (!utf8_mode && !utf8_codeset)
        return 0;
    for (int i = 0; i < 3; i++) {
        encodings[i] = "utf-8";
        errors[i] = i == 2 ? "backslashreplace" : escape ? "surrogateescape" : "strict";
    }
    return 1;
}

/* The request client.py's `delegate` sends, as CPython would have set up its
   process (PEP 538's LC_CTYPE in the environment); the process itself is left
   as it is. 0 where it cannot be made as Python would (Python sends it). */
static int build_request(struct message *m, char **argv) {
    const char *encodings[3], *errors[3], *target = coercion_target();
    char cwd[PATH_MAX];
    if (!standard_streams_usable())
        return 0;   /* a closed standard stream cannot be passed: client.py runs it alone too */
    if (!getcwd(cwd, sizeof cwd) || !python_stdio(target, encodings, errors) || python_only_variable())
        return 0;
    mode_t mask = umask(0);
    umask(mask);
    int argc = 0;
    while (argv[argc])
        argc++;
    put(m, "{", 1);
    put_string(m, "op");
    put_string(m, "run");
    put_string(m, "argv");
    put_int(m, '[', argc);
    for (int i = 0; i < argc; i++)
        put_string(m, argv[i]);
    put_string(m, "argv0");
    put_string(m, python_command);
    put_string(m, "cwd");
    put_string(m, cwd);
    put_string(m, "env");
    put(m, "{", 1);
    int coerced = 0;
    size_t command_length = strlen(COMMAND_VARIABLE);
    for (char **variable = environ; *variable; variable++) {
        char *equals = strchr(*variable, '=');
        size_t length = equals ? (size_t)(equals - *variable) : 0;
        if (!length || (length == command_length && memcmp(*variable, COMMAND_VARIABLE, length) == 0))
            continue;   /* (main.py takes COMMAND_VARIABLE out before it hands a command over) */
        put_text(m, *variable, length);
        if (target && length == 8 && memcmp(*variable, "LC_CTYPE", 8) == 0) {
            put_string(m, target);   /* setenv's: where it was */
            coerced = 1;
        } else {
            put_string(m, equals + 1);
        }
    }
    if (target && !coerced) {   /* setenv's: a new variable last */
        put_string(m, "LC_CTYPE");
        put_string(m, target);
    }
    put(m, "0", 1);
    put_string(m, "umask");
    put_int(m, 'i', (int32_t)mask);
    put_string(m, "main_package");
    put(m, "N", 1);
    put_string(m, "encodings");
    put_int(m, '[', 3);
    for (int i = 0; i < 3; i++)
        put_string(m, encodings[i]);
    put_string(m, "errors");
    put_int(m, '[', 3);
    for (int i = 0; i < 3; i++)
        put_string(m, errors[i]);
    put(m, "0", 1);
    return !m->broken;
}

/* ---- the answer: {"status": N} or {"signal": N}, as marshal writes them */

static int read_exactly(int fd, void *buffer, size_t size) {
    for (size_t got = 0; got < size;) {
        ssize_t n = read(fd, (char *)buffer + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

static int32_t little(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The answer's one key and its number; 0 where it is not such an answer. */
static int parse_answer(const unsigned char *p, size_t n, char key[16], int32_t *value) {
    size_t at = 0, length;
    if (n < 2 || (p[at++] & 0x7F) != '{')
        return 0;
    switch (p[at++] & 0x7F) {   /* the key: a short ASCII string ('z', 'Z'), or any other string */
    case 'z': case 'Z':
        length = p[at++];
        break;
    case 'a': case 'A': case 'u': case 't':
        if (at + 4 > n)
            return 0;
        length = (size_t)little(p + at);
        at += 4;
        break;
    default:
        return 0;
    }
    if (length >= 16 || at + length + 6 > n || (p[at + length] & 0x7F) != 'i')
        return 0;
    memcpy(key, p + at, length);
    key[length] = 0;
    *value = little(p + at + length + 1);
    return (p[at + length + 5] & 0x7F) == '0';
}

void serve(char **argv) {
    const char *mode = getenv("PYCORO_SERVER");
    struct index found;
    char name[64], hex[65];
    if (mode && strcmp(mode, "0") == 0)
        return;
    blake2b_hex(python_command, strlen(python_command), hex);
    snprintf(name, sizeof name, "serve-%.32s", hex);
    if (!read_index(name, SERVE_FORMAT, NULL, NULL, &found) || !found.socket)
        return;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    char folder[PATH_MAX];
    struct stat st;
    if (strlen(found.socket) >= sizeof address.sun_path || strlen(found.socket) >= sizeof folder)
        return;
    /* client.py's server_dir: only a folder of this user's that no one else
       may enter (another user could answer in the server's place) */
    strcpy(folder, found.socket);
    if (!strrchr(folder, '/') || (*strrchr(folder, '/') = 0, stat(folder, &st) != 0) || st.st_uid != getuid()
        || (st.st_mode & 077))
        return;
    strcpy(address.sun_path, found.socket);
    /* everything checked before the connection (which takes no standard
       stream's number: it is not among those the worker is given) */
    struct message request = {0};
    if (!build_request(&request, argv))
        return;
    int connection = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connection >= 0 && connection < 3) {
        int moved = fcntl(connection, F_DUPFD_CLOEXEC, 3);
        close(connection);
        connection = moved;
    }
    if (connection < 0 || connect(connection, (struct sockaddr *)&address, sizeof address) != 0) {
        if (connection >= 0)
            close(connection);
        return;   /* no server there now: Python runs it (and starts one, with PYCORO_SERVER=auto) */
    }
    unsigned char header[4] = {request.size >> 24, (request.size >> 16) & 0xFF, (request.size >> 8) & 0xFF,
                               request.size & 0xFF};
    int fds[3] = {0, 1, 2};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof fds)];
    } control;
    struct iovec parts[2] = {{header, 4}, {request.data, request.size}};
    struct msghdr message = {.msg_iov = parts, .msg_iovlen = 2, .msg_control = control.bytes,
                             .msg_controllen = sizeof control.bytes};
    struct cmsghdr *rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(rights), fds, sizeof fds);
    ssize_t sent = sendmsg(connection, &message, MSG_NOSIGNAL);
    size_t total = 4 + request.size, done = sent > 0 ? (size_t)sent : 0;
    while (sent > 0 && done < total) {   /* a large environment: the rest, without the descriptors */
        const unsigned char *from = done < 4 ? header + done : request.data + (done - 4);
        size_t left = done < 4 ? 4 - done : total - done;
        ssize_t n = send(connection, from, left, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        sent = n;
        done += n > 0 ? (size_t)n : 0;
    }
    if (sent <= 0) {   /* it went away before it took the command: Python runs it, as client.py does */
        close(connection);
        return;
    }
    if (tracing)
        fprintf(stderr, "pycoro launcher: to the compile server: %s\n", found.socket);
    unsigned char reply_header[4], reply[64];
    char key[16];
    int32_t value;
    signal(SIGINT, SIG_DFL);   /* Ctrl-C ends this process; the server then ends the worker */
    int answered = read_exactly(connection, reply_header, 4);
    size_t length = answered ? ((size_t)reply_header[0] << 24 | (size_t)reply_header[1] << 16
                                | (size_t)reply_header[2] << 8 | reply_header[3]) : 0;
    answered = answered && length <= sizeof reply && read_exactly(connection, reply, length)
               && parse_answer(reply, length, key, &value)
               && (strcmp(key, "status") == 0 || strcmp(key, "signal") == 0);
    close(connection);
    fflush(NULL);
    if (!answered) {
        fprintf(stderr, "pycoro: error: the compile server stopped during the command "
                        "(`PYCORO_SERVER=0` runs commands without it)\n");
        exit(70);
    }
    if (strcmp(key, "signal") == 0) {   /* the worker was killed by a signal: so is this process */
        signal(value, SIG_DFL);
        raise(value);
        exit(128 + value);
    }
    exit(value & 0xFF);
}
