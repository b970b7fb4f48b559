/* Reading the indexes a Python run writes (pipeline/launch.py documents
   their lines) and checking that everything they record is as it was. */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "launcher.h"

#define MAX_FILE ((size_t)1 << 30)

char *read_file(const char *path, size_t *size) {
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
int cache_dir(char *out, size_t size) {
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

/* What a line is checked against besides the system: the command line the
   launcher was given, and what it gathers of the index. */
struct context {
    const char *cwd, *file;
    struct index *found;
};

/* A line's check: `rest` is the line after its kind, `why` what the trace
   says where it fails. */
typedef void (*line_check)(char *rest, const char *why, struct context *c);

static void same_text(const char *recorded, const char *actual, const char *why) {
    if (!actual || strcmp(recorded, actual) != 0)
        to_python(why, recorded);
}

static void check_command(char *rest, const char *why, struct context *c) {
    (void)c;
    same_text(rest, python_command, why);
}

static void check_cwd(char *rest, const char *why, struct context *c) { same_text(rest, c->cwd, why); }

static void check_file(char *rest, const char *why, struct context *c) { same_text(rest, c->file, why); }

static void check_host(char *rest, const char *why, struct context *c) {
    static char host[70000];
    char hex[65];
    (void)c;
    if (!host_id(host, sizeof host))
        to_python("a processor the launcher cannot tell", NULL);
    blake2b_hex(host, strlen(host), hex);
    if (strcmp(rest, hex) != 0)
        to_python(why, NULL);
}

static void check_env(char *rest, const char *why, struct context *c) {
    const char *name = field(&rest), *value = name ? getenv(name) : NULL;
    char hex[65] = "-";
    (void)c;
    if (value)
        blake2b_hex(value, strlen(value), hex);
    if (!name || !rest || strcmp(rest, hex) != 0)
        to_python(why, name);
}

static void check_base(char *rest, const char *why, struct context *c) {
    char resolved[PATH_MAX];
    if (!c->file || !realpath(c->file, resolved) || strcmp(dirname(resolved), rest) != 0)
        to_python(why, rest);
}

static void check_leads(char *rest, const char *why, struct context *c) {
    const char *want = field(&rest);
    char resolved[PATH_MAX], hex[65];
    (void)c;
    if (!want || !rest || !realpath(rest, resolved))
        to_python(why, rest);
    blake2b_hex(resolved, strlen(resolved), hex);
    if (strcmp(hex, want) != 0)
        to_python(why, rest);
}

/* A `DIGEST PATH` line whose file has that content: its path. */
static char *same_content(char *rest, const char *why) {
    const char *want = field(&rest);
    if (!want || !rest || !content_matches(rest, want))
        to_python(why, rest);
    return rest;
}

static void check_source(char *rest, const char *why, struct context *c) {
    (void)c;
    same_content(rest, why);
}

static void check_library(char *rest, const char *why, struct context *c) {
    c->found->library = same_content(rest, why);
}

/* A file's or folder's stamp: its size where `size`, and its modification time. */
static void same_stamp(const char *size, const char *mtime, const char *path, const char *why) {
    struct stat st;
    char actual[64];
    if (!mtime || !path || stat(path, &st) != 0)
        to_python(why, path);
    snprintf(actual, sizeof actual, "%lld", mtime_ns(&st));
    if (strcmp(actual, mtime) != 0 || (size && strtoll(size, NULL, 10) != (long long)st.st_size))
        to_python(why, path);
}

static void check_stamp(char *rest, const char *why, struct context *c) {
    char *size = field(&rest), *mtime = field(&rest);
    (void)c;
    same_stamp(size, mtime, rest, why);
}

static void check_dir(char *rest, const char *why, struct context *c) {
    char *mtime = field(&rest);
    (void)c;
    same_stamp(NULL, mtime, rest, why);
}

static void check_absent(char *rest, const char *why, struct context *c) {
    struct stat st;
    (void)c;
    if (stat(rest, &st) == 0)
        to_python(why, rest);
}

static void check_launcher(char *rest, const char *why, struct context *c) {
    same_text(rest, LAUNCHER_DIGEST, why);   /* another pycoro's launcher, built into the same cache */
    c->found->named = 1;
}

static void keep_touch(char *rest, const char *why, struct context *c) {
    (void)why;
    c->found->touch = rest;
}

static void keep_socket(char *rest, const char *why, struct context *c) {
    (void)why;
    c->found->socket = rest;
}

/* Every kind of line an index may hold (launch.py's docstring). */
static const struct {
    const char *kind, *why;
    line_check check;
} LINES[] = {
    {"command", "an index of another command line", check_command},
    {"cwd", "an index of another command line", check_cwd},
    {"file", "an index of another command line", check_file},
    {"host", "another processor, or another PYCORO_TARGET_CPU", check_host},
    {"env", "another environment", check_env},
    {"base", "the program's folder is elsewhere now", check_base},
    {"leads", "an import is elsewhere now", check_leads},
    {"source", "a source changed", check_source},
    {"library", "the cache entry changed", check_library},
    {"stamp", "the compiler changed", check_stamp},
    {"dir", "the compiler changed", check_dir},
    {"absent", "the compiler changed", check_absent},
    {"launcher", "an index for another launcher", check_launcher},
    {"touch", NULL, keep_touch},
    {"socket", NULL, keep_socket},
};

static void check(char *line, struct context *c) {
    char *rest = line, *kind = field(&rest);
    if (!kind || !rest)
        to_python("an index cut short", NULL);
    for (size_t i = 0; i < sizeof LINES / sizeof LINES[0]; i++)
        if (strcmp(kind, LINES[i].kind) == 0) {
            LINES[i].check(rest, LINES[i].why, c);
            return;
        }
    to_python("an index this launcher does not know", kind);
}

char *read_index(const char *name, const char *format, const char *cwd, const char *file, struct index *found) {
    static char path[PATH_MAX + 128];
    char directory[PATH_MAX];
    size_t size;
    if (!cache_dir(directory, sizeof directory))
        return NULL;
    snprintf(path, sizeof path, "%s/%s", directory, name);
    char *index = read_file(path, &size);
    if (!index)
        return NULL;
    if (strlen(index) != size)
        to_python("an index this launcher does not know", path);
    char *line = index, *next = strchr(line, '\n');
    if (!next || (size_t)(next - line) != strlen(format) || memcmp(line, format, next - line) != 0)
        to_python("an index this launcher does not know", path);
    memset(found, 0, sizeof *found);
    struct context context = {cwd, file, found};
    for (line = next + 1; *line; line = next + 1) {
        next = strchr(line, '\n');
        if (!next)
            to_python("an index cut short", path);
        *next = 0;
        check(line, &context);
    }
    if (!found->named)
        to_python("an index for another launcher", path);
    return path;
}
