/* pycoro's launcher: `pycoro run FILE` of a program the cache holds, started
   without Python (a Python process alone starts in ~11 ms; this, ~1 ms).

   The `pycoro` command (bin/pycoro, a POSIX shell script) runs this as

       launcher PYTHON_COMMAND FILE

   for the command line `pycoro run FILE`, and as

       launcher --serve PYTHON_COMMAND build|check|explain ARGS...

   for those commands, which it hands to a compile server where one runs
   (serve.c), as would the Python command, ~12 ms later. It reads the launch index that a
   Python run of the same command line wrote (pycoro/pipeline/launch.py, which
   documents the format and builds this file into the cache), checks that
   everything the cache entry was made from is as it was, loads the program's
   shared library and calls its `main` as a cached Python run does
   (pipeline/rerun.py, in a process set up as CPython sets up its own). On any
   doubt it hands the command line to PYTHON_COMMAND, the `pycoro` command in
   Python, which gives the same result slowly and writes the index again
   (not for a program that does not load here: run() takes that wish back).

   (A `pycoro run FILE` the cache cannot start goes to Python, which hands it
   to a server only if the cache misses: a hit runs in this process.)
   PYCORO_LAUNCH_TRACE=1 says on stderr what it did, and why. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher.h"

#define INDEX_FORMAT "pycoro-launch 2"   /* launch.py's INDEX_FORMAT */
#define STACK_SIZE ((size_t)512 << 20)  /* cli/commands.py's in_big_stack */

typedef int (*main_function)(int, char **);

static void *call_main(void *main_address) {
    main_function program_main;
    memcpy(&program_main, &main_address, sizeof program_main);
    return (void *)(intptr_t)program_main(0, NULL);
}

/* `pycoro run FILE` from the cache, as rerun.py runs it. */
static void __attribute__((noreturn)) run(const char *file) {
    static char cwd[PATH_MAX], line_key[3 * PATH_MAX + 2];
    char key[65], name[64];
    struct index entry;
    if (!getcwd(cwd, sizeof cwd))
        to_python("no working folder", NULL);
    int key_size = snprintf(line_key, sizeof line_key, "%s%c%s%c%s", python_command, 0, cwd, 0, file);
    if (key_size < 0 || (size_t)key_size >= sizeof line_key)
        to_python("no index for this command line", NULL);
    blake2b_hex(line_key, (size_t)key_size, key);
    snprintf(name, sizeof name, "launch-%.32s", key);
    const char *index_path = read_index(name, INDEX_FORMAT, cwd, file, &entry);
    if (!index_path)
        to_python("no index for this command line", NULL);
    if (!entry.library)
        to_python("an index cut short", NULL);

    if (!standard_streams_usable())
        to_python("a standard stream closed, or a folder", NULL);   /* as the command in Python would see them */
    set_up_as_python();
    unsetenv(COMMAND_VARIABLE);   /* (a program that does not load here: Python runs it without writing the index again) */
    dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);   /* Python's own: a program's math resolves against it */
    void *library = dlopen(entry.library, RTLD_NOW);
    void *program_main = library ? dlsym(library, "main") : NULL;
    if (!program_main)
        to_python("cannot load the program here", dlerror());
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
        to_python("no thread with a 512 MiB stack", NULL);   /* Python says why, as the command would */
    pthread_join(thread, &result);
    fflush(NULL);
    exit((int)((intptr_t)result & 0xFF));
}

int main(int argc, char **argv) {
    const char *trace = getenv("PYCORO_LAUNCH_TRACE");
    tracing = trace && *trace && strcmp(trace, "0") != 0;
    if (argc >= 4 && strcmp(argv[1], "--serve") == 0) {
        python_command = argv[2];
        python_argv = argv + 2;   /* PYTHON_COMMAND ARGS... */
        serve(argv + 3);
        to_python("no compile server for this command", NULL);
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s PYTHON_COMMAND FILE, or --serve PYTHON_COMMAND ARGS "
                        "(the `pycoro` command runs this)\n", argv[0]);
        return 2;
    }
    static char *run_argv[4];
    python_command = argv[1];
    run_argv[0] = argv[1], run_argv[1] = "run", run_argv[2] = argv[2];
    python_argv = run_argv;
    run(argv[2]);
}
