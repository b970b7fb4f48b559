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

/* Check one line of an index. */
static void check(char *line, struct index *found, const char *cwd, const char *file) {
    char *rest = line, *kind = field(&rest);
    static char host[70000];
    if (!kind || !rest)
        to_python("an index cut short", NULL);
    if (strcmp(kind, "command") == 0 || strcmp(kind, "cwd") == 0 || strcmp(kind, "file") == 0) {
        const char *actual = kind[1] == 'o' ? python_command : kind[1] == 'w' ? cwd : file;
        if (!actual || strcmp(rest, actual) != 0)
            to_python("an index of another command line", rest);
    } else if (strcmp(kind, "host") == 0) {
        char hex[65];
        if (!host_id(host, sizeof host))
            to_python("a processor the launcher cannot tell", NULL);
        blake2b_hex(host, strlen(host), hex);
        if (strcmp(rest, hex) != 0)
            to_python("another processor, or another PYCORO_TARGET_CPU", NULL);
    } else if (strcmp(kind, "env") == 0) {
        const char *name = field(&rest), *value = name ? getenv(name) : NULL;
        char hex[65] = "-";
        if (value)
            blake2b_hex(value, strlen(value), hex);
        if (!name || !rest || strcmp(rest, hex) != 0)
            to_python("another environment", name);
    } else if (strcmp(kind, "base") == 0) {
        char resolved[PATH_MAX];
        if (!file || !realpath(file, resolved) || strcmp(dirname(resolved), rest) != 0)
            to_python("the program's folder is elsewhere now", rest);
    } else if (strcmp(kind, "leads") == 0) {
        const char *want = field(&rest);
        char resolved[PATH_MAX], hex[65];
        if (!want || !rest || !realpath(rest, resolved))
            to_python("an import is elsewhere now", rest);
        blake2b_hex(resolved, strlen(resolved), hex);
        if (strcmp(hex, want) != 0)
            to_python("an import is elsewhere now", rest);
    } else if (strcmp(kind, "source") == 0 || strcmp(kind, "library") == 0) {
        const char *want = field(&rest);
        if (!want || !rest || !content_matches(rest, want))
            to_python(kind[0] == 's' ? "a source changed" : "the cache entry changed", rest);
        if (kind[0] == 'l')
            found->library = rest;
    } else if (strcmp(kind, "stamp") == 0 || strcmp(kind, "dir") == 0) {
        char *size = kind[0] == 's' ? field(&rest) : NULL, *mtime = field(&rest);
        struct stat st;
        char recorded[64];
        if (!mtime || !rest || stat(rest, &st) != 0)
            to_python("the compiler changed", rest);
        snprintf(recorded, sizeof recorded, "%lld", mtime_ns(&st));
        if (strcmp(recorded, mtime) != 0 || (size && strtoll(size, NULL, 10) != (long long)st.st_size))
            to_python("the compiler changed", rest);
    } else if (strcmp(kind, "absent") == 0) {
        struct stat st;
        if (stat(rest, &st) == 0)
            to_python("the compiler changed", rest);
    } else if (strcmp(kind, "launcher") == 0) {
        if (strcmp(rest, LAUNCHER_DIGEST) != 0)   /* another pycoro's launcher, built into the same cache */
            to_python("an index for another launcher", rest);
        found->named = 1;
    } else if (strcmp(kind, "touch") == 0) {
        found->touch = rest;
    } else if (strcmp(kind, "socket") == 0) {
        found->socket = rest;
    } else {
        to_python("an index this launcher does not know", kind);
    }
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
    for (line = next + 1; *line; line = next + 1) {
        next = strchr(line, '\n');
        if (!next)
            to_python("an index cut short", path);
        *next = 0;
        check(line, found, cwd, file);
    }
    if (!found->named)
        to_python("an index for another launcher", path);
    return path;
}
