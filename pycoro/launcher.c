/* pycoro's launcher: `pycoro run FILE` of a program the cache holds, started
   without Python (a Python process alone starts in ~11 ms; this, ~1 ms).

   The `pycoro` command (bin/pycoro, a POSIX shell script) runs this as

       launcher PYTHON_COMMAND FILE

   for the command line `pycoro run FILE`. It reads the launch index that a
   Python run of the same command line wrote (pycoro/pipeline/launch.py, which
   documents the format and builds this file into the cache), checks that
   everything the cache entry was made from is as it was, loads the program's
   shared library and calls its `main` as a cached Python run does
   (pipeline/rerun.py, in a process set up as CPython sets up its own). On any
   doubt it hands the command line to PYTHON_COMMAND, the `pycoro` command in
   Python, which gives the same result slowly and writes the index again.

   PYCORO_LAUNCH_TRACE=1 says on stderr which of the two it did, and why. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define INDEX_FORMAT "pycoro-launch 2"            /* launch.py's INDEX_FORMAT */
#define COMMAND_VARIABLE "PYCORO_COMMAND"         /* launch.py's COMMAND_VARIABLE */
#define STACK_SIZE ((size_t)512 << 20)           /* cli/commands.py's in_big_stack */
#define MAX_FILE ((size_t)1 << 30)

static const char *python_command, *program_file;
static int tracing;

/* Hand the command line to the `pycoro` command in Python. */
static void __attribute__((noreturn)) miss(const char *why, const char *what) {
    if (tracing)
        fprintf(stderr, "pycoro launcher: to Python: %s%s%s\n", why, what ? ": " : "", what ? what : "");
    execl(python_command, python_command, "run", program_file, (char *)NULL);
    fprintf(stderr, "pycoro: cannot run %s\n", python_command);
    exit(127);
}

/* ---- BLAKE2b (RFC 7693), unkeyed, 32-byte digests: cache.py's digest(),
   CPython's blake2b(data, digest_size=32).hexdigest() */

static const uint64_t BLAKE2B_IV[8] = {
    UINT64_C(0x6a09e667f3bcc908), UINT64_C(0xbb67ae8584caa73b), UINT64_C(0x3c6ef372fe94f82b),
    UINT64_C(0xa54ff53a5f1d36f1), UINT64_C(0x510e527fade682d1), UINT64_C(0x9b05688c2b3e6c1f),
    UINT64_C(0x1f83d9abfb41bd6b), UINT64_C(0x5be0cd19137e2179),
};
static const unsigned char BLAKE2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static uint64_t rotr64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

static void blake2b_compress(uint64_t h[8], const unsigned char block[128], uint64_t t, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 16; i++) {
        m[i] = 0;
        for (int j = 7; j >= 0; j--)
            m[i] = (m[i] << 8) | block[8 * i + j];
    }
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = BLAKE2B_IV[i];
    }
    v[12] ^= t;   /* (the counter's high word stays 0: files under 2^64 bytes) */
    if (last)
        v[14] = ~v[14];
#define G(a, b, c, d, x, y)                  \
    do {                                     \
        v[a] = v[a] + v[b] + (x);            \
        v[d] = rotr64(v[d] ^ v[a], 32);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 24);      \
        v[a] = v[a] + v[b] + (y);            \
        v[d] = rotr64(v[d] ^ v[a], 16);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 63);      \
    } while (0)
    for (int r = 0; r < 12; r++) {
        const unsigned char *s = BLAKE2B_SIGMA[r];
        G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
#undef G
    for (int i = 0; i < 8; i++)
        h[i] ^= v[i] ^ v[i + 8];
}

/* The digest as lowercase hex (65 bytes with the NUL), as hexdigest() writes it. */
static void blake2b_hex(const void *data, size_t size, char hex[65]) {
    uint64_t h[8];
    memcpy(h, BLAKE2B_IV, sizeof h);
    h[0] ^= 0x01010000 ^ 32;   /* depth 1, fanout 1, no key, 32-byte digest */
    const unsigned char *p = data;
    unsigned char block[128];
    uint64_t t = 0;
    while (size > 128) {
        t += 128;
        blake2b_compress(h, p, t, 0);
        p += 128;
        size -= 128;
    }
    memset(block, 0, sizeof block);
    memcpy(block, p, size);
    blake2b_compress(h, block, t + size, 1);
    for (int i = 0; i < 32; i++)
        sprintf(hex + 2 * i, "%02x", (unsigned)((h[i / 8] >> (8 * (i % 8))) & 0xFF));
}

/* The whole file, NUL-terminated; NULL where it cannot be read. */
static char *read_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t capacity = 1 << 16, used = 0;
    char *data = malloc(capacity + 1);
    for (;;) {
        if (data && used == capacity) {
            capacity *= 2;
            char *larger = capacity > MAX_FILE ? NULL : realloc(data, capacity + 1);
            if (!larger)
                free(data);
            data = larger;
        }
        if (!data)
            break;
        ssize_t got = read(fd, data + used, capacity - used);
        if (got <= 0) {
            if (got < 0) {
                free(data);
                data = NULL;
            }
            break;
        }
        used += (size_t)got;
    }
    close(fd);
    if (data) {
        data[used] = 0;
        *size = used;
    }
    return data;
}

/* Whether the file's contents have this digest. */
static int content_matches(const char *path, const char *want) {
    size_t size;
    char *data = read_file(path, &size), hex[65];
    if (!data)
        return 0;
    blake2b_hex(data, size, hex);
    free(data);
    return strcmp(hex, want) == 0;
}

/* cache.py's cache_dir. */
static int cache_dir(char *out, size_t size) {
    const char *chosen = getenv("PYCORO_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (chosen && *chosen)
        n = snprintf(out, size, "%s", chosen);
    else if (xdg && *xdg)
        n = snprintf(out, size, "%s/pycoro", xdg);
    else if (home && *home)
        n = snprintf(out, size, "%s/.cache/pycoro", home);
    else
        return 0;
    return n > 0 && (size_t)n < size;
}

/* The lines of /proc/cpuinfo that cache.py's host_id keeps. */
static const char *const CPU_IDENTITY[] = {
    "vendor_id", "cpu family", "model", "model name", "stepping", "flags", "CPU implementer",
    "CPU architecture", "CPU variant", "CPU part", "CPU revision", "Features", NULL,
};

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

static int is_identity(const char *line, size_t length) {
    const char *colon = memchr(line, ':', length);
    size_t end = colon ? (size_t)(colon - line) : length, start = 0;
    while (start < end && is_space(line[start]))
        start++;
    while (end > start && is_space(line[end - 1]))
        end--;
    for (const char *const *name = CPU_IDENTITY; *name; name++)
        if (strlen(*name) == end - start && memcmp(*name, line + start, end - start) == 0)
            return 1;
    return 0;
}

/* cache.py's host_id() (on Linux, where it needs no LLVM) into `text`; 0
   where it would have asked LLVM (no identity lines). */
static int host_id(char *text, size_t size) {
    static char info[65536 + 1];
    size_t used = 0;
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    while (used < sizeof info - 1) {   /* CPU 0's entry: up to the first empty line */
        ssize_t got = read(fd, info + used, sizeof info - 1 - used);
        if (got <= 0)
            break;
        used += (size_t)got;
        info[used] = 0;
        if (strstr(info, "\n\n"))
            break;
    }
    close(fd);
    info[used] = 0;
    char *end = strstr(info, "\n\n");
    if (end)
        *end = 0;
    struct utsname name;
    if (uname(&name) != 0)
        return 0;
    size_t at = (size_t)snprintf(text, size, "linux\n%s", name.machine);
    int kept = 0;
    for (char *line = info; *line;) {
        char *next = strchr(line, '\n');
        size_t length = next ? (size_t)(next - line) : strlen(line);
        if (is_identity(line, length)) {
            if (at + 1 + length >= size)
                return 0;
            text[at++] = '\n';
            memcpy(text + at, line, length);
            at += length;
            kept++;
        }
        if (!next)
            break;
        line = next + 1;
    }
    const char *chosen = getenv("PYCORO_TARGET_CPU");
    return kept && (size_t)snprintf(text + at, size - at, "\n%s", chosen ? chosen : "") < size - at;
}

static long long mtime_ns(const struct stat *st) {
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* The next space-separated field of an index line; NULL where there is none. */
static char *field(char **cursor) {
    char *start = *cursor, *space = start ? strchr(start, ' ') : NULL;
    if (!start || !*start)
        return NULL;
    if (space) {
        *space = 0;
        *cursor = space + 1;
    } else {
        *cursor = NULL;
    }
    return start;
}

struct entry {
    const char *library, *touch;
};

/* Check one line of the index (launch.py's docstring says what each kind is). */
static void check(char *line, struct entry *entry, const char *cwd) {
    char *rest = line, *kind = field(&rest);
    static char host[70000];
    if (!kind || !rest)
        miss("an index cut short", NULL);
    if (strcmp(kind, "command") == 0 || strcmp(kind, "cwd") == 0 || strcmp(kind, "file") == 0) {
        const char *actual = kind[1] == 'o' ? python_command : kind[1] == 'w' ? cwd : program_file;
        if (strcmp(rest, actual) != 0)
            miss("an index of another command line", rest);
    } else if (strcmp(kind, "host") == 0) {
        char hex[65];
        if (!host_id(host, sizeof host))
            miss("a processor the launcher cannot tell", NULL);
        blake2b_hex(host, strlen(host), hex);
        if (strcmp(rest, hex) != 0)
            miss("another processor, or another PYCORO_TARGET_CPU", NULL);
    } else if (strcmp(kind, "env") == 0) {
        const char *name = field(&rest), *value = name ? getenv(name) : NULL;
        char hex[65] = "-";
        if (value)
            blake2b_hex(value, strlen(value), hex);
        if (!name || !rest || strcmp(rest, hex) != 0)
            miss("another environment", name);
    } else if (strcmp(kind, "base") == 0) {
        char resolved[PATH_MAX];
        if (!realpath(program_file, resolved) || strcmp(dirname(resolved), rest) != 0)
            miss("the program's folder is elsewhere now", rest);
    } else if (strcmp(kind, "source") == 0 || strcmp(kind, "library") == 0) {
        const char *want = field(&rest);
        if (!want || !rest || !content_matches(rest, want))
            miss(kind[0] == 's' ? "a source changed" : "the cache entry changed", rest);
        if (kind[0] == 'l')
            entry->library = rest;
    } else if (strcmp(kind, "stamp") == 0 || strcmp(kind, "dir") == 0) {
        char *size = kind[0] == 's' ? field(&rest) : NULL, *mtime = field(&rest);
        struct stat st;
        char recorded[64];
        if (!mtime || !rest || stat(rest, &st) != 0)
            miss("the compiler changed", rest);
        snprintf(recorded, sizeof recorded, "%lld", mtime_ns(&st));
        if (strcmp(recorded, mtime) != 0 || (size && strtoll(size, NULL, 10) != (long long)st.st_size))
            miss("the compiler changed", rest);
    } else if (strcmp(kind, "absent") == 0) {
        struct stat st;
        if (stat(rest, &st) == 0)
            miss("the compiler changed", rest);
    } else if (strcmp(kind, "touch") == 0) {
        entry->touch = rest;
    } else {
        miss("an index this launcher does not know", kind);
    }
}

/* As CPython sets up the C runtime before anything runs (a cached Python run
   calls `main` in such a process): LC_CTYPE from the environment, a C locale
   coerced to UTF-8 (PEP 538) as CPython does it, and unbuffered C stdio where
   PYTHONUNBUFFERED asks for it. */
static void set_up_as_python(void) {
    static const char *const UTF8_LOCALES[] = {"C.UTF-8", "C.utf8", "UTF-8", NULL};
    const char *coerce = getenv("PYTHONCOERCECLOCALE"), *all = getenv("LC_ALL");
    const char *unbuffered = getenv("PYTHONUNBUFFERED");
    if (coerce && *coerce)
        miss("PYTHONCOERCECLOCALE is set", NULL);
    const char *ctype = setlocale(LC_CTYPE, "");
    if (ctype && strcmp(ctype, "C") == 0 && !(all && *all)) {
        for (const char *const *target = UTF8_LOCALES; *target; target++)
            if (setlocale(LC_CTYPE, *target)) {
                setenv("LC_CTYPE", *target, 1);
                setlocale(LC_CTYPE, "");
                break;
            }
    }
    if (unbuffered && *unbuffered) {
        setvbuf(stdin, NULL, _IONBF, BUFSIZ);
        setvbuf(stdout, NULL, _IONBF, BUFSIZ);
        setvbuf(stderr, NULL, _IONBF, BUFSIZ);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGINT, SIG_DFL);   /* run_program's: Ctrl-C ends the program as it ends a native one */
}

typedef int (*main_function)(int, char **);

static void *call_main(void *main_address) {
    main_function program_main;
    memcpy(&program_main, &main_address, sizeof program_main);
    return (void *)(intptr_t)program_main(0, NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PYTHON_COMMAND FILE (the `pycoro` command runs this)\n", argv[0]);
        return 2;
    }
    python_command = argv[1];
    program_file = argv[2];
    const char *trace = getenv("PYCORO_LAUNCH_TRACE");
    tracing = trace && *trace && strcmp(trace, "0") != 0;

    static char directory[PATH_MAX], cwd[PATH_MAX], index_path[PATH_MAX + 128], line_key[3 * PATH_MAX + 2];
    if (!cache_dir(directory, sizeof directory) || !getcwd(cwd, sizeof cwd))
        miss("no cache", NULL);
    int key_size = snprintf(line_key, sizeof line_key, "%s%c%s%c%s", python_command, 0, cwd, 0, program_file);
    if (key_size < 0 || (size_t)key_size >= sizeof line_key)
        miss("no index for this command line", NULL);
    char key[65];
    blake2b_hex(line_key, (size_t)key_size, key);
    key[32] = 0;
    snprintf(index_path, sizeof index_path, "%s/launch-%s", directory, key);
    size_t size;
    char *index = read_file(index_path, &size);
    if (!index)
        miss("no index for this command line", NULL);
    char *line = index, *next = strchr(line, '\n');
    if (!next || (size_t)(next - line) != strlen(INDEX_FORMAT) || memcmp(line, INDEX_FORMAT, next - line) != 0)
        miss("an index this launcher does not know", NULL);
    struct entry entry = {NULL, NULL};
    for (line = next + 1; *line; line = next + 1) {
        next = strchr(line, '\n');
        if (!next)
            miss("an index cut short", NULL);
        *next = 0;
        check(line, &entry, cwd);
    }
    if (!entry.library)
        miss("an index cut short", NULL);

    set_up_as_python();
    unsetenv(COMMAND_VARIABLE);   /* (the Python command, given this command line, writes no index again) */
    dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);   /* Python's own: a program's math resolves against it */
    void *library = dlopen(entry.library, RTLD_NOW);
    void *program_main = library ? dlsym(library, "main") : NULL;
    if (!program_main)
        miss("cannot load the program here", dlerror());
    /* used: the newest to keep (cache.py's evict) */
    utimensat(AT_FDCWD, index_path, NULL, 0);
    if (entry.touch)
        utimensat(AT_FDCWD, entry.touch, NULL, 0);
    if (tracing)
        fprintf(stderr, "pycoro launcher: from the cache: %s\n", entry.library);

    pthread_attr_t attributes;
    pthread_t thread;
    void *result;
    if (pthread_attr_init(&attributes) != 0 || pthread_attr_setstacksize(&attributes, STACK_SIZE) != 0
        || pthread_create(&thread, &attributes, call_main, program_main) != 0)
        miss("no thread with a 512 MiB stack", NULL);   /* Python says why, as the command would */
    pthread_join(thread, &result);
    fflush(NULL);
    exit((int)((intptr_t)result & 0xFF));
}
