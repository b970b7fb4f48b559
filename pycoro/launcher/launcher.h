/* pycoro's launcher (launcher.c says what it is): what its files share. */
#ifndef PYCORO_LAUNCHER_H
#define PYCORO_LAUNCHER_H
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define COMMAND_VARIABLE "PYCORO_COMMAND"   /* launch.py's COMMAND_VARIABLE */
#ifndef LAUNCHER_DIGEST   /* launch.py builds the launcher with its sources' digest: an index names the launcher it is for */
#define LAUNCHER_DIGEST "unknown"
#endif

/* The `pycoro` command in Python, and the command line it is handed (its
   argv, from the command's path on) where the launcher does not do the work. */
extern const char *python_command;
extern char **python_argv;
extern int tracing;

/* python.c: say why (PYCORO_LAUNCH_TRACE) and hand the command line to Python. */
void __attribute__((noreturn)) to_python(const char *why, const char *what);

/* blake2b.c: cache.py's digest(), as 64 hex digits and a NUL. */
void blake2b_hex(const void *data, size_t size, char hex[65]);

/* index.c: reading an index (launch.py writes them) and checking its lines. */
struct index {
    const char *library, *touch, *socket;   /* its `library`, `touch` and `socket` lines, where it has them */
    int named;                              /* its `launcher` line named this launcher */
};
int cache_dir(char *out, size_t size);
/* The index `name` in the cache folder, every line checked (anything
   unlike the recorded state: to_python); NULL where there is none. */
char *read_index(const char *name, const char *format, const char *cwd, const char *file, struct index *found);
char *read_file(const char *path, size_t *size);

/* serve.c: hand the command line `argv` to a compile server, as
   cli/client.py does, and end this process as its worker ended; returns,
   having changed nothing of the process, where no server takes it. */
void serve(char **argv);

/* python.c: the process as CPython sets it up before anything runs; the
   pieces of it the server's client needs without changing the process:
   where CPython would coerce a C locale (PEP 538), the locale it would
   coerce to (the process's LC_CTYPE is "C" after); whether a locale is
   such a target; a set variable with which CPython does more than the
   launcher would. */
void set_up_as_python(void);
const char *coercion_target(void);
int is_coercion_target(const char *locale);
const char *python_only_variable(void);
/* Whether stdin, stdout and stderr are open, and none is a folder (where
   CPython would not start). */
int standard_streams_usable(void);
#endif
