"""Context annotations for Python programs traced by perusetrace (include/perusetrace/annotate.h).

    import perusetrace
    phase = perusetrace.Attribute("phase", module="mysolver")
    with phase.scope("exchange"):
        comm.Sendrecv(...)
    with perusetrace.region("solve"):
        ...
    iteration = perusetrace.Attribute("iteration")
    iteration.set(42)

The functions are found in the process (the tracer is preloaded into the Python interpreter,
LD_PRELOAD=libperusetrace.so, as into any program): without the tracer every call does nothing,
so an annotated program runs unchanged. Calls before MPI_Init, after MPI_Finalize or while
tracing is off record nothing. docs/annotations.md has the design.
"""
import contextlib
import ctypes

THREAD_SCOPE, PROCESS_SCOPE = 0, 1
NESTED, AS_VALUE = 0, 2


def _library_functions():
    try:
        process = ctypes.CDLL(None)
        create = process.perusetrace_annotate_attribute
    except (AttributeError, OSError):
        return None
    create.restype = ctypes.c_uint32
    create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    functions = {"attribute": create}
    for name, args in (("begin", [ctypes.c_uint32, ctypes.c_char_p]),
                       ("end", [ctypes.c_uint32]),
                       ("set", [ctypes.c_uint32, ctypes.c_char_p]),
                       ("set_int", [ctypes.c_uint32, ctypes.c_int64]),
                       ("region_begin", [ctypes.c_char_p]),
                       ("region_end", [ctypes.c_char_p])):
        f = getattr(process, "perusetrace_annotate_" + name)
        f.restype = None
        f.argtypes = args
        functions[name] = f
    return functions


_f = _library_functions()


def available():
    """Whether the tracer is in the process (annotations are recorded while it traces)."""
    return _f is not None


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode()


class Attribute:
    """An attribute, created once: `module` keeps two libraries' attributes of one name apart."""

    def __init__(self, name, module="", process_scope=False, as_value=False):
        flags = (PROCESS_SCOPE if process_scope else THREAD_SCOPE) | (AS_VALUE if as_value else
                                                                      NESTED)
        self.id = _f["attribute"](_bytes(module), _bytes(name), flags) if _f else 0

    def begin(self, value):
        """Opens `value` (a string, or a number written as its text) until end()."""
        if _f:
            _f["begin"](self.id, _bytes(value))

    def end(self):
        """Ends the innermost open value of the attribute on this thread."""
        if _f:
            _f["end"](self.id)

    def set(self, value):
        """Replaces the value: an int is recorded as a metric, anything else as a region."""
        if not _f:
            return
        if isinstance(value, int) and not isinstance(value, bool):
            _f["set_int"](self.id, value)
        else:
            _f["set"](self.id, _bytes(value))

    @contextlib.contextmanager
    def scope(self, value):
        """`with attribute.scope(value):` begins the value and ends it, whatever happens."""
        self.begin(value)
        try:
            yield self
        finally:
            self.end()


@contextlib.contextmanager
def region(name):
    """`with perusetrace.region("solve"):` a named code region (the attribute "region")."""
    if _f:
        _f["region_begin"](_bytes(name))
    try:
        yield
    finally:
        if _f:
            _f["region_end"](_bytes(name))
