/* The Python command the launcher stands in for: handing a command line to
   it, and the process as CPython sets it up before anything runs. */
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher.h"

const char *python_command;
char **python_argv;
int tracing;

void to_python(const char *why, const char *what) {
    if (tracing)
        fprintf(stderr, "pycoro launcher: to Python: %s%s%s\n", why, what ? ": " : "", what ? what : "");
    execv(python_command, python_argv);
    fprintf(stderr, "pycoro: cannot run %s\n", python_command);
    exit(127);
}

/* Variables with which CPython does more around a program than the launcher
   would (a fault handler's report, import traces, an interactive prompt):
   Python runs such a command line. */
static const char *const PYTHON_EXTRAS[] = {
    "PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONINSPECT", "PYTHONVERBOSE", "PYTHONPROFILEIMPORTTIME",
    "PYTHONTRACEMALLOC", "PYTHONCOERCECLOCALE", "PYTHONMALLOC", "PYTHONMALLOCSTATS", NULL,
};

static const char *const COERCION_TARGETS[] = {"C.UTF-8", "C.utf8", "UTF-8", NULL};

const char *coercion_target(void) {
    const char *all = getenv("LC_ALL");
    setlocale(LC_CTYPE, "");
    const char *now = setlocale(LC_CTYPE, NULL);
    int legacy = !(all && *all) && now && strcmp(now, "C") == 0;
    setlocale(LC_CTYPE, "C");
    for (const char *const *target = COERCION_TARGETS; legacy && *target; target++) {
        if (!setlocale(LC_CTYPE, *target))
            continue;
        const char *codeset = nl_langinfo(CODESET);
        setlocale(LC_CTYPE, "C");
        if (codeset && *codeset)
            return *target;
    }
    return NULL;
}

int is_coercion_target(const char *locale) {
    for (const char *const *target = COERCION_TARGETS; *target; target++)
        if (strcmp(locale, *target) == 0)
            return 1;
    return 0;
}

int standard_streams_usable(void) {
    struct stat st;
    for (int fd = 0; fd < 3; fd++)
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;   /* CPython refuses to start ("<stdin> is a directory, cannot continue") */
    return fstat(0, &st) == 0 && fstat(1, &st) == 0 && fstat(2, &st) == 0;
}

const char *python_only_variable(void) {
    for (const char *const *name = PYTHON_EXTRAS; *name; name++) {
        const char *value = getenv(*name);
        if (value && *value)
            return *name;
    }
    return NULL;
}

/* CPython 3.11's locale set-up: a C locale coerced to UTF-8 (PEP 538),
   after which every category is set from the environment; otherwise
   LC_CTYPE only. */
static void python_locale(void) {
    const char *target = coercion_target();
    if (target && setenv("LC_CTYPE", target, 1) == 0)
        setlocale(LC_ALL, "");
    setlocale(LC_CTYPE, "");
}

/* As CPython sets up the C runtime before anything runs (a cached Python run
   calls `main` in such a process, and the Python client sends its
   environment): its locale, unbuffered C stdio where PYTHONUNBUFFERED asks,
   SIGPIPE and SIGXFSZ ignored. */
void set_up_as_python(void) {
    const char *unbuffered = getenv("PYTHONUNBUFFERED"), *extra = python_only_variable();
    if (extra)
        to_python("a variable for Python", extra);
    python_locale();
    if (unbuffered && *unbuffered) {
        setvbuf(stdin, NULL, _IONBF, BUFSIZ);
        setvbuf(stdout, NULL, _IONBF, BUFSIZ);
        setvbuf(stderr, NULL, _IONBF, BUFSIZ);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGINT, SIG_DFL);   /* run_program's: Ctrl-C ends the program as it ends a native one */
}

