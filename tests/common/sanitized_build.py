"""The build directories of their own that the sanitizer suites use (build/asan, build/tsan):
configured once with the sanitizers, then brought up to date with just the targets a suite runs."""
import os
import subprocess


def build(source, build_root, name, prefix, sanitize, targets, options=()):
    """Configures BUILD_ROOT/NAME with -Db_sanitize=SANITIZE when it is not yet, builds
    `targets` in it, and returns its absolute path."""
    directory = os.path.abspath(os.path.join(build_root, name))
    if not os.path.exists(os.path.join(directory, "build.ninja")):
        subprocess.run(["meson", "setup", directory, source, f"-Dmpi_prefix={prefix}",
                        f"-Db_sanitize={sanitize}", "-Dbuildtype=debugoptimized", *options],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", directory, *targets], check=True, stdout=subprocess.DEVNULL)
    return directory
