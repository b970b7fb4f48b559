/* pycoro's launcher: `pycoro run FILE` of a program the cache holds, started
   without Python (a Python process alone starts in ~11 ms; this, ~1 ms).

   The `pycoro` command (bin/pycoro, a POSIX shell script) runs this as

       launcher PYTHON_COMMAND FILE

   for the command line `pycoro run FILE`. It reads the launch index that a
   Python run of the same command line wrote (pycoro/pipeline/launch.py, which
   documents the format and builds this file into the cache), checks that
   everything the cache entry was made from is unchanged, loads the program's
   shared library and calls its `main` as a cached Python run does
   (pipeline/rerun.py): on a thread with a 512 MiB stack, SIGPIPE ignored, C
   stdio flushed, the exit status `main`'s low byte. On any doubt it hands the
   command line to PYTHON_COMMAND, the `pycoro` command in Python, which gives
   the same result slowly and writes the index again.

   PYCORO_LAUNCH_TRACE=1 says on stderr which of the two it did, and why. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define INDEX_FORMAT "pycoro-launch 1"            /* launch.py's INDEX_FORMAT */
#define COMMAND_VARIABLE "PYCORO_COMMAND"         /* launch.py's COMMAND_VARIABLE */
#define STACK_SIZE ((size_t)512 << 20)           /* cli/commands.py's in_big_stack */
#define MAX_FILE (64 << 20)

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

/* 64-bit FNV-1a: launch.py's fnv. */
#define FNV_START UINT64_C(0xcbf29ce484222325)
static uint64_t fnv(uint64_t h, const void *data, size_t size) {
    const unsigned char *p = data;
    while (size--) {
        h ^= *p++;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
static uint64_t fnv_text(uint64_t h, const char *text) { return fnv(h, text, strlen(text)); }

/* The whole file, NUL-terminated; NULL where it cannot be read. */
static char *read_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t capacity = 4096, used = 0;
    char *data = malloc(capacity + 1);
    for (;;) {
        if (used == capacity) {
            capacity *= 2;
            data = capacity > MAX_FILE ? NULL : realloc(data, capacity + 1);
            if (!data)
                break;
        }
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

/* FNV-1a of cache.py's host_id() (on Linux, where it needs no LLVM); 0 where
   there is no such text. */
static uint64_t host_digest(void) {
    static char text[65536 + 1];
    size_t used = 0;
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    while (used < sizeof text - 1) {   /* CPU 0's entry: up to the first empty line */
        ssize_t got = read(fd, text + used, sizeof text - 1 - used);
        if (got <= 0)
            break;
        used += (size_t)got;
        text[used] = 0;
        if (strstr(text, "\n\n"))
            break;
    }
    close(fd);
    text[used] = 0;
    char *end = strstr(text, "\n\n");
    if (end)
        *end = 0;
    struct utsname name;
    if (uname(&name) != 0)
        return 0;
    uint64_t h = fnv_text(fnv_text(fnv_text(FNV_START, "linux"), "\n"), name.machine);
    int kept = 0;
    for (char *line = text; *line;) {
        char *next = strchr(line, '\n');
        size_t length = next ? (size_t)(next - line) : strlen(line);
        if (is_identity(line, length)) {
            h = fnv(fnv_text(h, "\n"), line, length);
            kept++;
        }
        if (!next)
            break;
        line = next + 1;
    }
    const char *chosen = getenv("PYCORO_TARGET_CPU");
    return kept ? fnv_text(fnv_text(h, "\n"), chosen ? chosen : "") : 0;
}

static int stamp_matches(const char *path, unsigned long long size, unsigned long long mtime_ns, int directory) {
    struct stat st;
    if (stat(path, &st) != 0 || (directory && !S_ISDIR(st.st_mode)))
        return 0;
    unsigned long long mtime = (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
    return mtime == mtime_ns && (directory || (unsigned long long)st.st_size == size);
}

struct entry {
    const char *library, *touch;
};

/* Check one line of the index (launch.py's write_index says what each kind is). */
static void check(char *line, struct entry *entry) {
    unsigned long long a = 0, b = 0;
    uint64_t want;
    int at = 0;
    char name[64];
    if (sscanf(line, "host %" SCNx64, &want) == 1) {
        if (host_digest() != want || want == 0)
            miss("another processor, or another PYCORO_TARGET_CPU", NULL);
    } else if (sscanf(line, "env %63s %n", name, &at) == 1 && at) {
        const char *value = getenv(name), *recorded = line + at;
        char digest[17];
        snprintf(digest, sizeof digest, "%016" PRIx64, value ? fnv_text(FNV_START, value) : 0);
        if (strcmp(recorded, value ? digest : "-") != 0)
            miss("another environment", name);
    } else if (sscanf(line, "source %" SCNx64 " %n", &want, &at) == 1 && at) {
        size_t size;
        char *data = read_file(line + at, &size);
        if (!data || fnv(FNV_START, data, size) != want)
            miss("a source changed", line + at);
        free(data);
    } else if (sscanf(line, "stamp %llu %llu %n", &a, &b, &at) == 2 && at) {
        if (!stamp_matches(line + at, a, b, 0))
            miss("the compiler or the cache entry changed", line + at);
    } else if (sscanf(line, "dir %llu %n", &b, &at) == 1 && at) {
        if (!stamp_matches(line + at, 0, b, 1))
            miss("the compiler's files changed", line + at);
    } else if (strncmp(line, "library ", 8) == 0) {
        entry->library = line + 8;
    } else if (strncmp(line, "touch ", 6) == 0) {
        entry->touch = line + 6;
    } else {
        miss("an index this launcher does not know", line);
    }
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

    char directory[4096], cwd[4096], index_path[4200];
    if (!cache_dir(directory, sizeof directory) || !getcwd(cwd, sizeof cwd))
        miss("no cache", NULL);
    uint64_t key = fnv_text(FNV_START, python_command);
    key = fnv_text(fnv(fnv_text(fnv(key, "", 1), cwd), "", 1), program_file);
    snprintf(index_path, sizeof index_path, "%s/launch-%016" PRIx64, directory, key);
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
        check(line, &entry);
    }
    if (!entry.library)
        miss("an index cut short", NULL);

    /* As the Python process that a cached run loads the library into. */
    unsetenv(COMMAND_VARIABLE);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);   /* Python's own: a program's math resolves against it */
    void *library = dlopen(entry.library, RTLD_NOW);
    void *program_main = library ? dlsym(library, "main") : NULL;
    if (!program_main)
        miss("cannot load the program here", dlerror());
    if (entry.touch)
        utimensat(AT_FDCWD, entry.touch, NULL, 0);   /* used: the newest entry to keep (cache.py's evict) */
    if (tracing)
        fprintf(stderr, "pycoro launcher: from the cache: %s\n", entry.library);

    pthread_attr_t attributes;
    pthread_t thread;
    void *result;
    intptr_t status;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, STACK_SIZE);
    if (pthread_create(&thread, &attributes, call_main, program_main) == 0 && pthread_join(thread, &result) == 0)
        status = (intptr_t)result;
    else
        status = (intptr_t)call_main(program_main);
    fflush(NULL);
    exit((int)(status & 0xFF));
}
