// Issue 18, sandbox findings, against real bubblewrap + python: the socket-family allow-list
// (AF_VSOCK/AF_ALG/AF_NETLINK creation refused — sockets are only created, never connected),
// NUMA-migration calls refused, garbage on the protocol descriptor kills only that sandbox with a
// readable error, and the close_range fallback marks descriptors one by one.
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/local/localsandboxprocess.h"
#include "sandbox/local/localsandboxseccomp.h"
#include "support/futurewait.h"

#include "sandboxprocessscan.h"

#include <QElapsedTimer>
#include <QTest>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace loopscope;
using loopscope::test::sandboxLeftovers;

namespace {

constexpr int kWaitMs = 60000; // generous: the CI box is a loaded 2-core VM
// What a driver must answer within when nothing is wrong with it (a patch did not reach it);
// far below a hang, far above a loaded machine's answer time.
constexpr int kAnswerMs = 20000;

// Creates one socket per (family, type) and prints "ok" or the errno name, space-separated.
const char *kSocketProbe = R"(import errno, socket
def probe(family, kind, proto=0):
    try:
        s = socket.socket(family, kind, proto)
        s.close()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def pair():
    try:
        a, b = socket.socketpair()
        a.close(); b.close()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print(probe(40, socket.SOCK_STREAM), probe(38, socket.SOCK_SEQPACKET),
      probe(16, socket.SOCK_RAW, 0), probe(17, socket.SOCK_RAW, 0),
      probe(socket.AF_UNIX, socket.SOCK_STREAM), probe(socket.AF_INET, socket.SOCK_STREAM),
      probe(socket.AF_INET, socket.SOCK_DGRAM), pair())
)";

// Creates files in %1 (with os.mknod or open) until an error or %3 of them; prints how many
// and the errno name.
const char *kInodeFill = R"(import errno, os
n, end = 0, 'none'
try:
    while n < %3:
        path = '%1/f%d' % n
        if '%2' == 'mknod':
            os.mknod(path)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
except OSError as e:
    end = errno.errorcode.get(e.errno, str(e.errno))
print(n, end))";

} // namespace

class TestSandboxHardening : public QObject {
    Q_OBJECT
private slots:
    void cleanup() {
        m_backend.reset();
        QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                                  qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
    }

    void socketFamiliesAreAllowListed_data() {
        QTest::addColumn<bool>("filter");
        QTest::newRow("filtered") << true;
        // Control: the same probe without the filter (proves the probe can fail).
        QTest::newRow("unfiltered") << false;
    }
    void socketFamiliesAreAllowListed() {
        QFETCH(bool, filter);
        LocalSandboxOptions options = testOptions();
        options.seccompFilter = filter;
        const Outcome<ExecutionResult> r = runOnce(options, QString::fromUtf8(kSocketProbe));
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
        const QStringList f = r.value.stdoutText.trimmed().split(QLatin1Char(' '));
        QCOMPARE(f.size(), 8);
        // What Python needs inside the empty network namespace keeps working either way.
        QCOMPARE(f.mid(4), (QStringList{QStringLiteral("ok"), QStringLiteral("ok"),
                                        QStringLiteral("ok"), QStringLiteral("ok")}));
        if (filter) {
            // AF_VSOCK, AF_ALG, AF_NETLINK, AF_PACKET: refused as if the kernel lacked them.
            for (int i = 0; i < 4; ++i)
                QCOMPARE(f.at(i), QStringLiteral("EAFNOSUPPORT"));
        } else {
            // Without the filter this kernel hands out a netlink socket (and, on a VM with
            // vsock, an AF_VSOCK one: the hole the allow-list closes).
            QCOMPARE(f.at(2), QStringLiteral("ok"));
            qInfo("unfiltered: AF_VSOCK %s, AF_ALG %s", qPrintable(f.at(0)), qPrintable(f.at(1)));
        }
    }

    void numaMigrationIsRefused_data() {
        QTest::addColumn<bool>("filter");
        QTest::newRow("filtered") << true;
        QTest::newRow("unfiltered") << false;
    }
    void numaMigrationIsRefused() {
        QFETCH(bool, filter);
        LocalSandboxOptions options = testOptions();
        options.seccompFilter = filter;
        // mbind(MPOL_DEFAULT) on one page of our own, and move_pages/migrate_pages of ourselves
        // with nothing to move: harmless calls the kernel accepts unless the filter says no.
        const Outcome<ExecutionResult> r = runOnce(
            options,
            QStringLiteral(
                "import ctypes, mmap\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                "libc.syscall.restype = ctypes.c_long\n"
                "def call(nr, *args):\n    ctypes.set_errno(0)\n"
                "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n"
                "    return ctypes.get_errno() if r == -1 else 0\n"
                "m = mmap.mmap(-1, 4096)\n"
                "addr = ctypes.addressof(ctypes.c_char.from_buffer(m))\n"
                "print(call(%1, addr, 4096, 0, 0, 0, 0), call(%2, 0, 0, 0, 0, 0, 0), "
                "call(%3, 0, 0, 0, 0))")
                .arg(SYS_mbind)
                .arg(SYS_move_pages)
                .arg(SYS_migrate_pages));
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
        const QStringList f = r.value.stdoutText.trimmed().split(QLatin1Char(' '));
        QCOMPARE(f.size(), 3);
        if (filter) {
            QCOMPARE(f, (QStringList{QStringLiteral("1"), QStringLiteral("1"),
                                     QStringLiteral("1")})); // EPERM
        } else {
            QVERIFY2(f.at(0) != QLatin1String("1"), qPrintable(r.value.stdoutText));
        }
        QVERIFY(LocalSandboxSeccomp::blockedSyscalls().contains(QStringLiteral("mbind")));
    }

    // Model-written code finds the driver's private protocol descriptor and writes garbage on
    // it: that sandbox dies with an error that says so; the proxy and other sandboxes go on.
    void garbageOnTheProtocolFdKillsOnlyThatSandbox_data() {
        QTest::addColumn<QString>("bytes");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("not JSON") << QStringLiteral("b'\\x00\\x00\\x00\\x07garbage'")
                                  << QStringLiteral("not a JSON object");
        QTest::newRow("absurd length") << QStringLiteral("b'\\xff\\xff\\xff\\xffxx'")
                                       << QStringLiteral("4294967295-byte frame");
        QTest::newRow("unknown op") << QStringLiteral("b'\\x00\\x00\\x00\\x0d{\"op\":\"evil\"}'")
                                    << QStringLiteral("unexpected frame");
    }
    void garbageOnTheProtocolFdKillsOnlyThatSandbox() {
        QFETCH(QString, bytes);
        QFETCH(QString, mentions);
        LocalSandboxOptions options = testOptions();
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> victim = awaitFuture(m_backend->create({}), kWaitMs);
        const Outcome<SandboxHandle> bystander = awaitFuture(m_backend->create({}), kWaitMs);
        QVERIFY2(victim.ok() && bystander.ok(), qPrintable(victim.error + bystander.error));
        QVERIFY(awaitFuture(m_backend->run(bystander.value, QStringLiteral("x = 41"), {}), kWaitMs)
                    .ok());
        const Outcome<ExecutionResult> r =
            awaitFuture(m_backend->run(victim.value,
                                       QStringLiteral("import gc, os, time\n"
                                                      "d = [o for o in gc.get_objects() if "
                                                      "type(o).__name__ == 'Driver'][0]\n"
                                                      "os.write(d.proto_out, %1)\ntime.sleep(20)\n")
                                           .arg(bytes),
                                       {}),
                        kWaitMs);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.value.error);
        QCOMPARE(r.value.error->name, QStringLiteral("InterpreterExited"));
        QVERIFY2(r.value.error->value.contains(QStringLiteral("broke the sandbox protocol")) &&
                     r.value.error->value.contains(mentions),
                 qPrintable(r.value.error->value));
        // The other sandbox kept its state.
        const Outcome<ExecutionResult> other = awaitFuture(
            m_backend->run(bystander.value, QStringLiteral("print(x + 1)"), {}), kWaitMs);
        QVERIFY2(other.ok(), qPrintable(other.error));
        QCOMPARE(other.value.stdoutText, QStringLiteral("42\n"));
    }

    // Code patches what the driver used to look up after a run (os.walk, builtins, posix,
    // io, time, select). The listing, reads and writes of /mnt/data and the next run
    // must not run any of it: each answers at once, as if nothing had been patched.
    void patchesDoNotReachTheDriver_data() {
        QTest::addColumn<QString>("patch");
        QTest::newRow("os.walk") << QStringLiteral(
            "import os, time\nos.walk = lambda *a, **k: time.sleep(10**6)");
        QTest::newRow("os and posix functions")
            << QStringLiteral("import os, posix, time\n"
                              "def hang(*a, **k):\n    time.sleep(10**6)\n"
                              "for m in (os, posix):\n"
                              "    for n in ('open', 'read', 'write', 'scandir', 'lstat', 'stat',\n"
                              "              'fstat', 'listdir', 'dup2', 'close', 'remove',\n"
                              "              'unlink', 'mkdir', 'makedirs', 'ftruncate'):\n"
                              "        if hasattr(m, n):\n            setattr(m, n, hang)\n"
                              "os.path.realpath = os.path.join = os.path.isfile = hang\n"
                              "os.O_RDONLY = posix.O_RDONLY = os.devnull = None");
        QTest::newRow("builtins") << QStringLiteral(
            "import builtins, time\n"
            "def hang(*a, **k):\n    time.sleep(10**6)\n"
            "for n in ('len', 'sorted', 'min', 'str', 'int', 'open', 'isinstance',\n"
            "          'bytes', 'memoryview'):\n"
            "    setattr(builtins, n, hang)");
        QTest::newRow("io, time and select")
            << QStringLiteral("import io, select, time\nsleep = time.sleep\n"
                              "def hang(*a, **k):\n    sleep(10**6)\n"
                              "io.BytesIO = select.select = hang\n"
                              "time.monotonic = time.perf_counter = hang");
    }
    void patchesDoNotReachTheDriver() {
        QFETCH(QString, patch);
        LocalSandboxOptions options = testOptions();
        options.fileTimeoutMs = 0; // the answers must come from an unharmed driver, not a kill
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
        QVERIFY2(created.ok(), qPrintable(created.error));
        const QByteArray csv("city,temp\nOslo,4\n");
        QVERIFY(awaitFuture(
                    m_backend->writeFile(created.value, QStringLiteral("/mnt/data/a.csv"), csv, {}),
                    kWaitMs)
                    .ok());
        const Outcome<ExecutionResult> patched =
            awaitFuture(m_backend->run(created.value, patch, {}), kWaitMs);
        QVERIFY2(patched.ok() && !patched.value.error,
                 qPrintable(patched.error + patched.value.stderrText));

        auto listed = m_backend->listFiles(created.value, {});
        QVERIFY2(waitForFuture(listed, kAnswerMs), "the listing hangs after the patch");
        QVERIFY2(listed.result().ok(), qPrintable(listed.result().error));
        QCOMPARE(listed.result().value.size(), 1);
        QCOMPARE(listed.result().value.first().path, QStringLiteral("/mnt/data/a.csv"));
        auto read = m_backend->readFile(created.value, QStringLiteral("/mnt/data/a.csv"), {});
        QVERIFY2(waitForFuture(read, kAnswerMs), "the read hangs after the patch");
        QCOMPARE(read.result().value, csv);
        auto written =
            m_backend->writeFile(created.value, QStringLiteral("/mnt/data/new/b.txt"), "b", {});
        QVERIFY2(waitForFuture(written, kAnswerMs), "the write hangs after the patch");
        QVERIFY2(written.result().ok(), qPrintable(written.result().error));
        // The same interpreter serves the next run (its streams wired without the patches).
        const qint64 pid = m_backend->processId(created.value.id);
        auto next = m_backend->run(created.value, QStringLiteral("x = 6 * 7"), {});
        QVERIFY2(waitForFuture(next, kAnswerMs), "the next run hangs after the patch");
        QVERIFY2(next.result().ok() && !next.result().value.error, qPrintable(next.result().error));
        QCOMPARE(m_backend->processId(created.value.id), pid);
    }

    // Code that takes the driver itself apart (found through gc) can hang its file service;
    // the proxy's own clock ends that: the request fails within fileTimeoutMs, the interpreter
    // is killed like a timed-out run, and the sandbox goes on with a fresh one.
    void hungFileServiceIsKilledByTheHostClock() {
        LocalSandboxOptions options = testOptions();
        options.fileTimeoutMs = 1500;
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
        QVERIFY2(created.ok(), qPrintable(created.error));
        const Outcome<ExecutionResult> sabotage = awaitFuture(
            m_backend->run(created.value,
                           QStringLiteral("import gc, time\n"
                                          "d = [o for o in gc.get_objects() if "
                                          "type(o).__name__ == 'Driver'][0]\n"
                                          "class Hang:\n"
                                          "    def handle(self, *a):\n        time.sleep(10**6)\n"
                                          "d.files = Hang()"),
                           {}),
            kWaitMs);
        QVERIFY2(sabotage.ok() && !sabotage.value.error, qPrintable(sabotage.error));
        const qint64 pid = m_backend->processId(created.value.id);
        QElapsedTimer clock;
        clock.start();
        auto listed = m_backend->listFiles(created.value, {});
        QVERIFY2(waitForFuture(listed, kAnswerMs), "a hung file service hangs the request");
        QVERIFY(!listed.result().ok());
        QVERIFY2(listed.result().error.contains(QStringLiteral("did not answer a file request")),
                 qPrintable(listed.result().error));
        QVERIFY2(clock.elapsed() >= 1400, "failed before its time");
        QTRY_VERIFY_WITH_TIMEOUT(m_backend->processId(created.value.id) != pid, kAnswerMs);
        const Outcome<ExecutionResult> after = awaitFuture(
            m_backend->run(created.value, QStringLiteral("print('alive')"), {}), kWaitMs);
        QVERIFY2(after.ok() && !after.value.error, qPrintable(after.error));
        QVERIFY(after.value.stdoutText.endsWith(QStringLiteral("alive\n")));
        QVERIFY2(after.value.stderrText.contains(QStringLiteral("did not answer a file request")),
                 qPrintable(after.value.stderrText));
    }

    // What code puts where a file was (a FIFO, a symlink out) is refused at once, never
    // opened in a way that blocks or leaves /mnt/data.
    void nonRegularFilesAreRefusedAtOnce_data() {
        QTest::addColumn<QString>("plant");
        QTest::addColumn<bool>("write");
        QTest::addColumn<QString>("mentions");
        const QString fifo = QStringLiteral("import os\nos.remove('a.csv')\nos.mkfifo('a.csv')");
        QTest::newRow("read a FIFO") << fifo << false << QStringLiteral("not a regular file");
        QTest::newRow("write a FIFO") << fifo << true << QStringLiteral("Errno 6");
        const QString link = QStringLiteral(
            "import os\nos.remove('a.csv')\nos.symlink('/etc/ld.so.cache', 'a.csv')");
        QTest::newRow("read a symlink") << link << false << QStringLiteral("Errno 40");
        QTest::newRow("write a symlink") << link << true << QStringLiteral("Errno 40");
        QTest::newRow("read through a symlinked dir")
            << QStringLiteral("import os\nos.remove('a.csv')\nos.mkdir('real')\n"
                              "open('real/a.csv', 'w').write('x')\nos.symlink('real', 'd')")
            << false << QStringLiteral("Errno 20");
    }
    void nonRegularFilesAreRefusedAtOnce() {
        QFETCH(QString, plant);
        QFETCH(bool, write);
        QFETCH(QString, mentions);
        LocalSandboxOptions options = testOptions();
        options.fileTimeoutMs = 0; // refused by the driver, not ended by a kill
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
        QVERIFY2(created.ok(), qPrintable(created.error));
        QVERIFY(awaitFuture(m_backend->writeFile(created.value, QStringLiteral("/mnt/data/a.csv"),
                                                 "a,b\n", {}),
                            kWaitMs)
                    .ok());
        const Outcome<ExecutionResult> planted =
            awaitFuture(m_backend->run(created.value, plant, {}), kWaitMs);
        QVERIFY2(planted.ok() && !planted.value.error,
                 qPrintable(planted.error + planted.value.stderrText));
        const QString path = QString::fromLatin1(QTest::currentDataTag()).contains(u"dir")
                                 ? QStringLiteral("/mnt/data/d/a.csv")
                                 : QStringLiteral("/mnt/data/a.csv");
        QString error;
        if (write) {
            auto f = m_backend->writeFile(created.value, path, "new", {});
            QVERIFY2(waitForFuture(f, kAnswerMs), "the write hangs");
            QVERIFY(!f.result().ok());
            error = f.result().error;
        } else {
            auto f = m_backend->readFile(created.value, path, {});
            QVERIFY2(waitForFuture(f, kAnswerMs), "the read hangs");
            QVERIFY(!f.result().ok());
            error = f.result().error;
        }
        QVERIFY2(error.contains(mentions), qPrintable(error));
        // The interpreter is unharmed.
        const Outcome<ExecutionResult> after =
            awaitFuture(m_backend->run(created.value, QStringLiteral("print(1)"), {}), kWaitMs);
        QVERIFY2(after.ok() && !after.value.error, qPrintable(after.error));
        QCOMPARE(after.value.stdoutText, QStringLiteral("1\n"));
    }

    // Empty files cost no tmpfs `size=` but an inode each, unreclaimable kernel memory that
    // no limit of the sandbox's processes counts. Every tmpfs of a sandbox has nr_inodes: a
    // loop creating files stops with ENOSPC at the cap, far before the loop's own end.
    // Forked sandboxes mount theirs with it; a bwrap of its own (sandbox.zygote: false, or where
    // the zygote cannot work) has its driver remount bwrap's before any code runs.
    void tmpfsInodesAreCapped_data() {
        QTest::addColumn<bool>("zygote");
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("how");
        QTest::addColumn<int>("cap");
        const LocalSandboxOptions defaults;
        for (const bool zygote : {true, false}) {
            const char *path = zygote ? "forked" : "bwrap";
            for (const char *how : {"mknod", "open"}) {
                QTest::addRow("%s, /dev/shm %s", path, how)
                    << zygote << QStringLiteral("/dev/shm") << QString::fromLatin1(how)
                    << defaults.tmpDirInodes;
                QTest::addRow("%s, /tmp %s", path, how)
                    << zygote << QStringLiteral("/tmp") << QString::fromLatin1(how)
                    << defaults.tmpDirInodes;
                QTest::addRow("%s, /mnt/data %s", path, how)
                    << zygote << QStringLiteral("/mnt/data") << QString::fromLatin1(how)
                    << defaults.workDirInodes;
            }
        }
    }
    void tmpfsInodesAreCapped() {
        QFETCH(bool, zygote);
        QFETCH(QString, dir);
        QFETCH(QString, how);
        QFETCH(int, cap);
        LocalSandboxOptions options = testOptions();
        options.zygote = zygote;
        const Outcome<ExecutionResult> r =
            runOnce(options, QString::fromLatin1(kInodeFill).arg(dir, how).arg(cap * 3));
        QCOMPARE(m_backend->usesZygote(), zygote);
        QVERIFY2(r.ok() && !r.value.error, qPrintable(r.error + r.value.stderrText));
        const QStringList f = r.value.stdoutText.trimmed().split(u' ');
        QCOMPARE(f.size(), 2);
        QCOMPARE(f.at(1), QStringLiteral("ENOSPC"));
        QVERIFY2(f.at(0).toInt() <= cap && f.at(0).toInt() > cap - 64, qPrintable(f.at(0)));
    }

    // A timed-out or crashed interpreter must not take the container's files with it (an
    // uploaded CSV, what earlier runs wrote): the next interpreter of the same sandbox finds
    // them in /mnt/data. Only regular files come over; links and FIFOs the code left do not.
    void filesOutliveAStoppedInterpreter_data() {
        QTest::addColumn<bool>("zygote");
        QTest::addColumn<QString>("ending");
        QTest::addColumn<QString>("error");
        for (const bool zygote : {true, false}) {
            const char *path = zygote ? "forked" : "bwrap";
            QTest::addRow("%s, timeout", path) << zygote << QStringLiteral("while True:\n    pass")
                                               << QStringLiteral("TimeoutError");
            QTest::addRow("%s, exit", path) << zygote << QStringLiteral("import os\nos._exit(3)")
                                            << QStringLiteral("InterpreterExited");
        }
    }
    void filesOutliveAStoppedInterpreter() {
        QFETCH(bool, zygote);
        QFETCH(QString, ending);
        QFETCH(QString, error);
        LocalSandboxOptions options = testOptions();
        options.zygote = zygote;
        options.timeoutMs = 2000;
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
        QVERIFY2(created.ok(), qPrintable(created.error));
        QCOMPARE(m_backend->usesZygote(), zygote);
        QVERIFY(awaitFuture(m_backend->writeFile(created.value, QStringLiteral("/mnt/data/up.csv"),
                                                 "a,b\n", {}),
                            kWaitMs)
                    .ok());
        const Outcome<ExecutionResult> wrote = awaitFuture(
            m_backend->run(
                created.value,
                QStringLiteral("import os\nos.mkdir('nested')\n"
                               "open('nested/out.txt', 'w').write('x')\n"
                               "os.mkfifo('pipe')\nos.symlink('/etc/ld.so.cache', 'link')"),
                {}),
            kWaitMs);
        QVERIFY2(wrote.ok() && !wrote.value.error, qPrintable(wrote.error));
        const qint64 pid = m_backend->processId(created.value.id);
        const Outcome<ExecutionResult> ended =
            awaitFuture(m_backend->run(created.value, ending, {}), kWaitMs);
        QVERIFY2(ended.ok() && ended.value.error, qPrintable(ended.error));
        QCOMPARE(ended.value.error->name, error);

        const Outcome<ExecutionResult> after = awaitFuture(
            m_backend->run(created.value,
                           QStringLiteral("import os\nprint(open('up.csv').read().strip(), "
                                          "open('nested/out.txt').read(), os.path.lexists('pipe'), "
                                          "os.path.lexists('link'))"),
                           {}),
            kWaitMs);
        QVERIFY2(after.ok() && !after.value.error,
                 qPrintable(after.error + after.value.stderrText));
        QVERIFY(m_backend->processId(created.value.id) != pid);
        QCOMPARE(after.value.stdoutText, QStringLiteral("a,b x False False\n"));
        QVERIFY2(after.value.stderrText.contains(QStringLiteral("2 files in /mnt/data were carried "
                                                                "over (2 entries were not")),
                 qPrintable(after.value.stderrText));
        const Outcome<QList<SandboxFileInfo>> listed =
            awaitFuture(m_backend->listFiles(created.value, {}), kWaitMs);
        QVERIFY2(listed.ok(), qPrintable(listed.error));
        QStringList paths;
        for (const SandboxFileInfo &file : listed.value)
            paths << file.path;
        QCOMPARE(paths, (QStringList{QStringLiteral("/mnt/data/up.csv"),
                                     QStringLiteral("/mnt/data/nested/out.txt")}));
    }

    // Kernels before 5.11 have no close_range(CLOSE_RANGE_CLOEXEC): the fallback must mark
    // every inheritable descriptor itself and keep only the one meant for bwrap.
    void closeRangeFallbackMarksDescriptorsOneByOne() {
        int leak[2] = {-1, -1};
        int keep[2] = {-1, -1};
        QCOMPARE(::pipe(leak), 0); // no O_CLOEXEC: would cross exec
        QCOMPARE(::pipe2(keep, O_CLOEXEC), 0);
        QVERIFY((::fcntl(leak[0], F_GETFD) & FD_CLOEXEC) == 0);
        // The forked child's case, done in this process: only descriptor flags change.
        QVERIFY(LocalSandboxProcess::markInheritedCloseOnExec(keep[0], 65536, false));
        QVERIFY((::fcntl(leak[0], F_GETFD) & FD_CLOEXEC) != 0);
        QVERIFY((::fcntl(leak[1], F_GETFD) & FD_CLOEXEC) != 0);
        QCOMPARE(::fcntl(keep[0], F_GETFD) & FD_CLOEXEC, 0); // handed on
        QVERIFY((::fcntl(0, F_GETFD) & FD_CLOEXEC) == 0);    // stdio untouched
        for (int fd : {leak[0], leak[1], keep[0], keep[1]})
            ::close(fd);
    }

    void filterIsSupportedHere() {
        // On an architecture without a filter the self-test warns loudly (see selfTest()).
        QVERIFY(LocalSandboxSeccomp::supported());
        LocalSandboxOptions options = testOptions();
        options.poolSize = 0;
        LocalPythonBackend backend(options);
        const SandboxSelfTest health = backend.selfTest();
        for (const QString &warning : health.warnings)
            QVERIFY2(!warning.contains(QStringLiteral("seccomp")), qPrintable(warning));
    }

private:
    static LocalSandboxOptions testOptions() {
        LocalSandboxOptions options;
        options.poolSize = 0;
        options.timeoutMs = 30000;
        return options;
    }
    Outcome<ExecutionResult> runOnce(const LocalSandboxOptions &options, const QString &code) {
        m_backend = std::make_unique<LocalPythonBackend>(options);
        const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
        if (!created.ok())
            return Outcome<ExecutionResult>::failure(created.error);
        return awaitFuture(m_backend->run(created.value, code, {}), kWaitMs);
    }

    std::unique_ptr<LocalPythonBackend> m_backend;
};

QTEST_GUILESS_MAIN(TestSandboxHardening)
#include "tst_sandboxhardening.moc"
