#include "sandbox/local/localpythonbackend.h"
#include "support/futurewait.h"

#include "sandboxprocessscan.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QSemaphore>
#include <QSet>
#include <QTcpServer>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <csignal>
#include <sys/syscall.h>
#include <unistd.h>

using namespace loopscope;
using loopscope::test::processExists;
using loopscope::test::sandboxLeftovers;

namespace {
constexpr int kWaitMs = 60000; // generous: the CI box is a loaded 2-core VM

QByteArray commandLineOf(qint64 pid) {
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
    return pid > 0 && cmdline.open(QIODevice::ReadOnly) ? cmdline.readAll() : QByteArray();
}
} // namespace

// Real bubblewrap + python processes. Every test ends (cleanup()) by destroying its backend and
// proving that no process of our sandboxes is left.
class TestLocalPythonBackend : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();

    void sandboxIdsAreRandomContainerIds();
    void selfTestPassesOnThisMachine();
    void selfTestNamesWhatIsMissing_data();
    void selfTestNamesWhatIsMissing();
    void statePersistsAcrossRuns();
    void exceptionsComeBackWithNameValueTraceback_data();
    void exceptionsComeBackWithNameValueTraceback();
    void tracebackQuotesEarlierCells();
    void childProcessOutputIsCaptured();
    void printedFramesCannotForgeAResult();
    void outputIsUtf8Safe();
    void runsOnOneSandboxAreQueuedInOrder();
    void sitePackagesAndBuiltinsWithoutTheSiteModule();
    void driverStartsLean();
    void liveOutputArrivesWhileTheCodeRuns();
    void liveOutputIsBoundedInRateAndSize();
    void liveOutputOfAQuickRunIsOptional();

    void escapeIsRefused_data();
    void escapeIsRefused();
    void hostLoopbackPortIsRefused_data() { addPathColumn(); }
    void hostLoopbackPortIsRefused();
    void seccompFilterBlocksKernelSurface_data();
    void seccompFilterBlocksKernelSurface();
    void canaryEnvironmentVariableIsAbsent_data() { addPathColumn(); }
    void canaryEnvironmentVariableIsAbsent();
    void limitsHoldOnBothPaths_data() { addPathColumn(); }
    void limitsHoldOnBothPaths();
    void noStateCrossesSandboxes_data() { addPathColumn(); }
    void noStateCrossesSandboxes();
    void scratchSpaceIsSizeCapped_data();
    void scratchSpaceIsSizeCapped();
    void cpuLimitKillsAndIsNamed();
    void brokenBubblewrapFailsFastWithReason();
    void forkBombIsContainedAndSandboxDeletable();
    void memoryCapRaisesMemoryError();
    void infiniteLoopTimesOutAndNextRunIsFresh();
    void interpreterExitIsReportedAndRecovers();
    void hugeOutputIsCapped_data();
    void hugeOutputIsCapped();
    void outputCapsAreConfigurable();

    void twentySandboxesInParallel();
    void poolHandsOutEachInterpreterOnce();
    void poolCanBeDisabled();
    void shutdownWhilePoolIsStartingLeavesNothing();
    void createIsServedWhileARefillIsHeldAndShutdownReapsIt();
    void poolGrowsUnderDemandAndShrinksWhenIdle();
    void pooledInterpretersStartAtLowerPriority();
    void killingASandboxLeavesNoZombie();
    void forkedSandboxGoesWithEveryProcess();
    void zygoteDeathEndsItsSandboxesAndANewOneServes();
    void forkedSandboxesDrawTheirOwnRandomness();
    void forkedSandboxHoldsNoneOfTheZygotesDescriptors();
    void forkedSandboxSeesNoneOfTheZygotesFiles();
    void removeKillsTreeAndIsIdempotent();
    void removeWhileRunningEndsTheRun();
    void cancelInterruptsTheRunAndKeepsState_data() { addPathColumn(); }
    void cancelInterruptsTheRunAndKeepsState();
    void cancelOfCodeThatWillNotStopKillsTheInterpreter_data();
    void cancelOfCodeThatWillNotStopKillsTheInterpreter();
    void cancelledQueuedRunNeverRuns();
    void destructorKillsEverything();
    void destroyedWithWorkPending();
    void livesOnItsOwnThread();
    void unisolatedNeedsExplicitSwitchAndIsFlagged();

private:
    // Every isolation check runs on each way a sandbox comes to be: "fresh" (a bwrap started
    // for the create, pool off), "pooled" (a warm bwrap interpreter handed out by the pool,
    // checked), "forked" (forked by the zygote, which makes the namespaces itself, checked) and
    // "forked-pooled" (a warm fork handed out by the pool: the default configuration).
    static void addPathColumn();
    static QStringList paths() {
        return {QStringLiteral("fresh"), QStringLiteral("pooled"), QStringLiteral("forked"),
                QStringLiteral("forked-pooled")};
    }
    LocalPythonBackend &backendFor(const QString &path,
                                   LocalSandboxOptions options = testOptions());
    SandboxHandle createVia(const QString &path);
    // A backend with the zygote and no pool, and one sandbox forked by it (checked).
    SandboxHandle createForkedWithoutPool();
    static LocalSandboxOptions testOptions();
    LocalPythonBackend &backend(const LocalSandboxOptions &options = testOptions());
    SandboxHandle create();
    Outcome<ExecutionResult> run(const SandboxHandle &handle, const QString &code);
    // Runs `code`, cancels it once its live output shows `marker`, and returns the result.
    Outcome<ExecutionResult> cancelOnceItPrints(const SandboxHandle &handle, const QString &code,
                                                const QString &marker);

    std::unique_ptr<LocalPythonBackend> m_backend;
};

LocalSandboxOptions TestLocalPythonBackend::testOptions() {
    LocalSandboxOptions options;
    options.poolSize = 1;
    options.timeoutMs = 20000;
    return options;
}

LocalPythonBackend &TestLocalPythonBackend::backend(const LocalSandboxOptions &options) {
    m_backend = std::make_unique<LocalPythonBackend>(options);
    return *m_backend;
}

SandboxHandle TestLocalPythonBackend::create() {
    const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
    if (!created.ok())
        qWarning() << "create failed:" << created.error;
    return created.value;
}

Outcome<ExecutionResult> TestLocalPythonBackend::run(const SandboxHandle &handle,
                                                     const QString &code) {
    return awaitFuture(m_backend->run(handle, code, {}), kWaitMs);
}

Outcome<ExecutionResult> TestLocalPythonBackend::cancelOnceItPrints(const SandboxHandle &handle,
                                                                    const QString &code,
                                                                    const QString &marker) {
    QString live;
    const CancellationToken cancel = Cancellation::create();
    auto running = m_backend->run(
        handle, code, {}, [&live](const QString &, const QString &text) { live += text; }, cancel);
    if (!QTest::qWaitFor([&] { return live.contains(marker); }, kWaitMs))
        return Outcome<ExecutionResult>::failure(QStringLiteral("the code never printed ") +
                                                 marker);
    if (running.isFinished())
        return Outcome<ExecutionResult>::failure(QStringLiteral("the run ended by itself"));
    cancel->cancel();
    cancel->cancel(); // a second cancel is a no-op
    return awaitFuture(running, kWaitMs);
}

void TestLocalPythonBackend::addPathColumn() {
    QTest::addColumn<QString>("path");
    for (const QString &path : paths())
        QTest::newRow(qPrintable(path)) << path;
}

LocalPythonBackend &TestLocalPythonBackend::backendFor(const QString &path,
                                                       LocalSandboxOptions options) {
    const bool pooled = path.endsWith(QLatin1String("pooled"));
    options.poolSize = pooled ? 1 : 0;
    options.poolMaxSize = pooled ? 1 : 0; // a fixed pool: every create waits for its hand-off
    options.zygote = path.startsWith(QLatin1String("forked"));
    return backend(options);
}

SandboxHandle TestLocalPythonBackend::createVia(const QString &path) {
    SandboxHandle handle;
    if (path.endsWith(QLatin1String("pooled"))) {
        // Only a warm interpreter that is ready counts: one still starting would make this a
        // fresh start in all but name.
        if (!QTest::qWaitFor([this] { return m_backend->readyPoolCount() == 1; }, kWaitMs)) {
            qWarning("the pool did not fill");
            return {};
        }
        const QList<qint64> pooled = m_backend->pooledProcessIds();
        handle = create();
        if (!pooled.contains(m_backend->processId(handle.id))) {
            qWarning("the sandbox was not the pooled interpreter");
            return {};
        }
    } else {
        if (m_backend->pooledCount() != 0) {
            qWarning("a fresh sandbox was asked for, but the backend has a pool");
            return {};
        }
        handle = create();
    }
    // A forked sandbox's top is its PID-namespace init, not a bwrap: its parent is the zygote,
    // inside the zygote's bwrap.
    const bool bwrapTop = commandLineOf(m_backend->processId(handle.id)).contains("bwrap");
    if (path.startsWith(QLatin1String("forked")) &&
        (!m_backend->usesZygote() || m_backend->zygoteProcessId() <= 0 || bwrapTop)) {
        qWarning("the sandbox was not forked by the zygote");
        return {};
    }
    if (!path.startsWith(QLatin1String("forked")) && !bwrapTop) {
        qWarning("the sandbox was not a bwrap of its own");
        return {};
    }
    return handle;
}

SandboxHandle TestLocalPythonBackend::createForkedWithoutPool() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 0;
    options.zygote = true;
    backend(options);
    if (!m_backend->usesZygote()) {
        qWarning("the backend does not use the zygote");
        return {};
    }
    return createVia(QStringLiteral("forked"));
}

void TestLocalPythonBackend::initTestCase() {
    QVERIFY2(sandboxLeftovers().isEmpty(), "sandbox processes exist before the first test");
}

void TestLocalPythonBackend::cleanup() {
    m_backend.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

void TestLocalPythonBackend::sandboxIdsAreRandomContainerIds() {
    const QRegularExpression shape(QStringLiteral("^cntr_[0-9a-f]{32}$"));
    QSet<QString> seen;
    for (int i = 0; i < 1000; ++i) {
        const QString id = LocalPythonBackend::newSandboxId();
        QVERIFY2(shape.match(id).hasMatch(), qPrintable(id));
        seen.insert(id);
    }
    QCOMPARE(seen.size(), 1000);
}

void TestLocalPythonBackend::selfTestPassesOnThisMachine() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 0;
    const SandboxSelfTest result = backend(options).selfTest();
    QVERIFY2(result.available, qPrintable(result.problems.join(QLatin1Char('\n'))));
    QVERIFY(result.problems.isEmpty());
    QCOMPARE(m_backend->provider(), QStringLiteral("local"));
    QVERIFY(m_backend->isIsolated());
}

void TestLocalPythonBackend::selfTestNamesWhatIsMissing_data() {
    QTest::addColumn<QString>("bwrap");
    QTest::addColumn<QString>("python");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no bwrap") << QStringLiteral("/nonexistent/bwrap")
                              << QStringLiteral("/usr/bin/python3")
                              << QStringLiteral("bubblewrap at /nonexistent/bwrap: install the "
                                                "Debian package bubblewrap");
    QTest::newRow("no python") << QStringLiteral("/usr/bin/bwrap")
                               << QStringLiteral("/nonexistent/python3")
                               << QStringLiteral("/nonexistent/python3: install the Debian package "
                                                 "python3-minimal");
}

void TestLocalPythonBackend::selfTestNamesWhatIsMissing() {
    QFETCH(QString, bwrap);
    QFETCH(QString, python);
    QFETCH(QString, expected);
    LocalSandboxOptions options = testOptions();
    options.bwrapPath = bwrap;
    options.pythonPath = python;
    const SandboxSelfTest result = backend(options).selfTest();
    QVERIFY(!result.available);
    QVERIFY2(result.problems.join(QLatin1Char('\n')).contains(expected),
             qPrintable(result.problems.join(QLatin1Char('\n'))));
    // A request that needs a sandbox gets the same explanation at once, not a hang.
    const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), 1000);
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(expected), qPrintable(created.error));
    QCOMPARE(m_backend->pooledCount(), 0);
}

void TestLocalPythonBackend::statePersistsAcrossRuns() {
    backend();
    const SandboxHandle sandbox = create();
    QVERIFY(sandbox.isValid());
    QCOMPARE(sandbox.provider, QStringLiteral("local"));

    Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import math\nx = 41\n"
                                    "open('notes.txt','w').write('kept')"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.error);
    QCOMPARE(r.value.executionCount, 1);

    r = run(sandbox, QStringLiteral("import os\nprint(x + 1, math.pi > 3, open('notes.txt').read(),"
                                    " os.getcwd())"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.error);
    QCOMPARE(r.value.stdoutText, QStringLiteral("42 True kept /mnt/data\n"));
    QCOMPARE(r.value.executionCount, 2);
    QVERIFY(r.value.durationMs > 0.0);
    QVERIFY(!r.value.timedOut);
}

void TestLocalPythonBackend::exceptionsComeBackWithNameValueTraceback_data() {
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("stdout");
    QTest::addColumn<QString>("sourceLine"); // tracebacks quote the user's code
    QTest::newRow("zero division") << QStringLiteral("print('before')\n1/0") << "ZeroDivisionError"
                                   << "division by zero"
                                   << "before\n"
                                   << "    1/0\n";
    QTest::newRow("name error") << QStringLiteral("undefined_name") << "NameError"
                                << "name 'undefined_name' is not defined"
                                << ""
                                << "    undefined_name\n";
    QTest::newRow("raised in function")
        << QStringLiteral("def f():\n    raise ValueError('boom')\nf()") << "ValueError"
        << "boom"
        << ""
        << "    raise ValueError('boom')\n";
    QTest::newRow("syntax error") << QStringLiteral("def broken(:\n  pass") << "SyntaxError"
                                  << "invalid syntax (<cell 1>, line 1)"
                                  << ""
                                  << "    def broken(:\n";
    QTest::newRow("sys.exit keeps interpreter")
        << QStringLiteral("import sys\nsys.exit(3)") << "SystemExit"
        << "3"
        << ""
        << "    sys.exit(3)\n";
}

void TestLocalPythonBackend::exceptionsComeBackWithNameValueTraceback() {
    QFETCH(QString, code);
    QFETCH(QString, name);
    QFETCH(QString, value);
    QFETCH(QString, stdout);
    backend();
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r = run(sandbox, code);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, name);
    QCOMPARE(r.value.error->value, value);
    QVERIFY2(r.value.error->traceback.contains(name), qPrintable(r.value.error->traceback));
    QVERIFY2(r.value.error->traceback.contains(QStringLiteral("<cell 1>")),
             qPrintable(r.value.error->traceback));
    QVERIFY2(!r.value.error->traceback.contains(QStringLiteral("loopscope-driver")),
             "driver frames leak into the traceback");
    QFETCH(QString, sourceLine);
    QVERIFY2(r.value.error->traceback.contains(sourceLine), qPrintable(r.value.error->traceback));
    QCOMPARE(r.value.stdoutText, stdout);
    // The interpreter survives user exceptions.
    const Outcome<ExecutionResult> after = run(sandbox, QStringLiteral("print('alive')"));
    QVERIFY(after.ok());
    QCOMPARE(after.value.stdoutText, QStringLiteral("alive\n"));
}

void TestLocalPythonBackend::tracebackQuotesEarlierCells() {
    backend();
    const SandboxHandle sandbox = create();
    QVERIFY(run(sandbox, QStringLiteral("def helper(x):\n    return 10 // x")).ok());
    const Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("helper(0)"));
    QVERIFY(r.ok() && r.value.error);
    const QString tb = r.value.error->traceback;
    QVERIFY2(tb.contains(QStringLiteral("File \"<cell 2>\", line 1")), qPrintable(tb));
    QVERIFY2(
        tb.contains(QStringLiteral("File \"<cell 1>\", line 2, in helper\n    return 10 // x")),
        qPrintable(tb));
}

void TestLocalPythonBackend::childProcessOutputIsCaptured() {
    backend();
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r = run(
        sandbox, QStringLiteral("import os, subprocess\nos.write(1, b'raw\\n')\n"
                                "subprocess.run(['/bin/sh', '-c', 'echo child; echo oops >&2'])"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.error);
    QVERIFY2(r.value.stdoutText.contains(QStringLiteral("raw\n")), qPrintable(r.value.stdoutText));
    QVERIFY2(r.value.stdoutText.contains(QStringLiteral("child\n")),
             qPrintable(r.value.stdoutText));
    QCOMPARE(r.value.stderrText, QStringLiteral("oops\n"));
}

void TestLocalPythonBackend::printedFramesCannotForgeAResult() {
    backend();
    const SandboxHandle sandbox = create();
    // A well-formed protocol frame written to every place user code can print to.
    const Outcome<ExecutionResult> r = run(
        sandbox,
        QStringLiteral("import json, os, sys\n"
                       "body = json.dumps({'op':'result','id':1,'stdout':'FORGED','error':None})\n"
                       "frame = len(body).to_bytes(4, 'big') + body.encode()\n"
                       "sys.stdout.buffer.write(frame)\nos.write(1, frame)\nos.write(2, frame)\n"
                       "print(frame.decode('latin-1'))\nprint('genuine')"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.error);
    QVERIFY(r.value.stdoutText.contains(QStringLiteral("genuine\n")));
    // The frames arrived as plain output, not as protocol.
    QVERIFY(r.value.stdoutText.count(QStringLiteral("FORGED")) >= 2);
    QVERIFY(r.value.stdoutText != QStringLiteral("FORGED"));
    const Outcome<ExecutionResult> next = run(sandbox, QStringLiteral("print('next')"));
    QVERIFY(next.ok());
    QCOMPARE(next.value.stdoutText, QStringLiteral("next\n"));
    QCOMPARE(next.value.executionCount, 2);
}

void TestLocalPythonBackend::sitePackagesAndBuiltinsWithoutTheSiteModule() {
    // The interpreter starts with -S (faster); the driver adds what `site` would: the
    // site-packages directories and exit/quit/help.
    backend();
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import sys, numpy, pandas, matplotlib\n"
                                    "print(sys.flags.no_site, numpy.__name__, pandas.__name__)\n"
                                    "print(callable(exit), callable(quit), callable(help))\n"
                                    "print(repr(exit))"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, qPrintable(r.value.error ? r.value.error->traceback : QString()));
    QCOMPARE(r.value.stdoutText,
             QStringLiteral("1 numpy pandas\nTrue True True\nUse exit() to exit\n"));
    r = run(sandbox, QStringLiteral("print('before')\nexit(3)"));
    QVERIFY(r.ok());
    QCOMPARE(r.value.stdoutText, QStringLiteral("before\n"));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("SystemExit"));
    r = run(sandbox, QStringLiteral("print('still here')"));
    QCOMPARE(r.value.stdoutText, QStringLiteral("still here\n"));
}

namespace {
struct LiveChunk {
    QString stream;
    QString text;
    bool runFinished = false; // the run's future, when the chunk arrived
};
} // namespace

// The driver speaks JSON through _json, runs its threads through _thread and takes
// spec_from_loader from the frozen bootstrap: importing json, threading and importlib.util
// costs every sandbox start ~9 ms of CPU (docs/benchmarks.md, capacity). User code
// still imports json and threading as usual.
void TestLocalPythonBackend::driverStartsLean() {
    backend();
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r = run(
        sandbox, QStringLiteral(
                     "import sys\nprint(sorted(m for m in ('json', 're', 'enum', 'importlib.util', "
                     "'threading', 'collections') if m in sys.modules))"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("[]\n"));
    r = run(sandbox, QStringLiteral("import json, threading\nout = []\n"
                                    "t = threading.Thread(target=lambda: out.append(json.dumps("
                                    "{'a': [1, 'é']}, ensure_ascii=False)))\nt.start()\nt.join()\n"
                                    "print(out[0], threading.active_count() >= 1)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    QCOMPARE(r.value.stdoutText, QStringLiteral("{\"a\": [1, \"é\"]} True\n"));
}

void TestLocalPythonBackend::liveOutputArrivesWhileTheCodeRuns() {
    backend();
    const SandboxHandle sandbox = create();
    QList<LiveChunk> chunks;
    QFuture<Outcome<ExecutionResult>> future;
    future = m_backend->run(
        sandbox,
        QStringLiteral("import os, sys, time\n"
                       "for i in range(3):\n"
                       "    print(i, flush=True)\n"
                       "    print('err', i, file=sys.stderr)\n"
                       "    os.write(1, b'fd%d\\n' % i)\n" // below Python: the fd drain
                       "    time.sleep(0.5)\n"
                       "print('h\u00e9 \U0001F600 done')\n"),
        {}, [&](const QString &stream, const QString &text) {
            chunks.append({stream, text, future.isFinished()});
        });
    // The first chunk comes while the code still sleeps in its loop.
    QTRY_VERIFY_WITH_TIMEOUT(!chunks.isEmpty() || future.isFinished(), kWaitMs);
    QVERIFY2(!chunks.isEmpty(), "the run finished before any live output arrived");
    QVERIFY(!chunks.first().runFinished);
    const Outcome<ExecutionResult> r = awaitFuture(future, kWaitMs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.error);
    QString liveOut;
    QString liveErr;
    for (const LiveChunk &chunk : std::as_const(chunks)) {
        QVERIFY(!chunk.runFinished); // every chunk before the result
        QVERIFY(chunk.stream == QLatin1String("stdout") || chunk.stream == QLatin1String("stderr"));
        (chunk.stream == QLatin1String("stdout") ? liveOut : liveErr) += chunk.text;
    }
    // The final output is unchanged, and the chunks of a streaming run add up to it.
    QCOMPARE(r.value.stdoutText, QStringLiteral("0\nfd0\n1\nfd1\n2\nfd2\nhé 😀 done\n"));
    QCOMPARE(r.value.stderrText, QStringLiteral("err 0\nerr 1\nerr 2\n"));
    QCOMPARE(liveOut, r.value.stdoutText);
    QCOMPARE(liveErr, r.value.stderrText);

    // The next run on the same sandbox streams again, from its own first byte.
    QList<LiveChunk> second;
    future = m_backend->run(sandbox,
                            QStringLiteral("import time\nprint('again', flush=True)\n"
                                           "time.sleep(0.5)"),
                            {}, [&](const QString &stream, const QString &text) {
                                second.append({stream, text, future.isFinished()});
                            });
    const Outcome<ExecutionResult> again = awaitFuture(future, kWaitMs);
    QVERIFY(again.ok());
    QCOMPARE(again.value.stdoutText, QStringLiteral("again\n"));
    QCOMPARE(second.size(), 1);
    QCOMPARE(second.first().text, QStringLiteral("again\n"));
    QVERIFY(!second.first().runFinished);
}

void TestLocalPythonBackend::liveOutputIsBoundedInRateAndSize() {
    LocalSandboxOptions options = testOptions();
    options.liveOutputCapBytes = 64 * 1024;
    backend(options);
    const SandboxHandle sandbox = create();
    // ~590 KB in 100,000 prints as fast as Python goes, then a pause the stream must not fill.
    QList<LiveChunk> chunks;
    QFuture<Outcome<ExecutionResult>> future;
    QElapsedTimer clock;
    clock.start();
    future = m_backend->run(sandbox,
                            QStringLiteral("import time\nfor i in range(100000):\n    print(i)\n"
                                           "time.sleep(0.3)\nprint('end')"),
                            {}, [&](const QString &stream, const QString &text) {
                                chunks.append({stream, text, future.isFinished()});
                            });
    const Outcome<ExecutionResult> r = awaitFuture(future, kWaitMs);
    const qint64 elapsedMs = clock.elapsed();
    QVERIFY2(r.ok(), qPrintable(r.error));
    QString expected;
    for (int i = 0; i < 100000; ++i)
        expected += QString::number(i) + QLatin1Char('\n');
    expected += QStringLiteral("end\n");
    QCOMPARE(r.value.stdoutText, expected); // the result keeps everything (under the 1 MiB cap)
    QVERIFY(!r.value.stdoutTruncated);

    QVERIFY(!chunks.isEmpty());
    QString live;
    for (const LiveChunk &chunk : std::as_const(chunks)) {
        QVERIFY(!chunk.runFinished);
        QCOMPARE(chunk.stream, QStringLiteral("stdout"));
        live += chunk.text;
    }
    // Size: the cap, then one notice, then nothing (not even "end").
    const QString notice = QStringLiteral("[loopscope: live output stopped after 65536 bytes");
    QVERIFY2(live.endsWith(QStringLiteral("comes with its result]\n")),
             qPrintable(live.right(200)));
    QCOMPARE(live.count(notice), 1);
    const QString streamed = live.left(live.indexOf(notice)).chopped(1); // the notice's "\n"
    QCOMPARE(streamed.toUtf8().size(), 64 * 1024);
    QVERIFY(expected.startsWith(streamed));
    // Rate: each chunk is either >= 4 KiB or the first after >= 50 ms of quiet, so there can be
    // no more than cap / 4 KiB + elapsed / 50 ms of them (plus the notice).
    const qint64 bound = 64 * 1024 / 4096 + elapsedMs / 50 + 2;
    QVERIFY2(chunks.size() <= bound,
             qPrintable(QStringLiteral("%1 chunks in %2 ms").arg(chunks.size()).arg(elapsedMs)));

    // A later run on the same sandbox streams again (the cap is per run).
    QList<LiveChunk> next;
    future = m_backend->run(sandbox,
                            QStringLiteral("import time\nprint('x', flush=True)\n"
                                           "time.sleep(0.3)"),
                            {}, [&](const QString &stream, const QString &text) {
                                next.append({stream, text, future.isFinished()});
                            });
    QVERIFY(awaitFuture(future, kWaitMs).ok());
    QCOMPARE(next.size(), 1);
    QCOMPARE(next.first().text, QStringLiteral("x\n"));
}

void TestLocalPythonBackend::liveOutputOfAQuickRunIsOptional() {
    // A run that ends within the coalescing interval may send no chunk at all; whatever it
    // sends still precedes the result and never adds to it. Live output off: nothing at all.
    LocalSandboxOptions options = testOptions();
    options.liveOutputCapBytes = 0;
    backend(options);
    const SandboxHandle sandbox = create();
    int calls = 0;
    const auto r =
        awaitFuture(m_backend->run(sandbox,
                                   QStringLiteral("import time\nprint(1, flush=True)\n"
                                                  "time.sleep(0.3)\nprint(2)"),
                                   {}, [&](const QString &, const QString &) { ++calls; }),
                    kWaitMs);
    QVERIFY(r.ok());
    QCOMPARE(r.value.stdoutText, QStringLiteral("1\n2\n"));
    QCOMPARE(calls, 0);
}

void TestLocalPythonBackend::outputIsUtf8Safe() {
    backend();
    const SandboxHandle sandbox = create();
    // Invalid bytes from below Python become U+FFFD; text survives.
    Outcome<ExecutionResult> r = run(
        sandbox, QStringLiteral("import os\nos.write(1, b'\\xff ok\\n')\nprint('gr\u00fc\u00df')"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(r.value.stdoutText.contains(QStringLiteral("\ufffd ok\n")),
             qPrintable(r.value.stdoutText));
    QVERIFY(r.value.stdoutText.contains(QStringLiteral("gr\u00fc\u00df\n")));
    // A cap that falls inside a 2-byte character cuts before it, not through it.
    r = run(sandbox, QStringLiteral("print('a' + '\u00e9' * 600000)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.stdoutTruncated);
    const QString kept =
        r.value.stdoutText.left(r.value.stdoutText.indexOf(QStringLiteral("\n[output")));
    QVERIFY(!kept.contains(QChar(0xfffd)));
    QCOMPARE(kept.size(), 1 + (1024 * 1024 - 1) / 2);
}

void TestLocalPythonBackend::runsOnOneSandboxAreQueuedInOrder() {
    backend();
    const SandboxHandle sandbox = create();
    QList<QFuture<Outcome<ExecutionResult>>> futures;
    futures << m_backend->run(sandbox, QStringLiteral("import time\ntime.sleep(0.2)\nseq = [1]"),
                              {});
    for (int i = 2; i <= 5; ++i)
        futures << m_backend->run(sandbox, QStringLiteral("seq.append(%1)\nprint(seq)").arg(i), {});
    for (int i = 0; i < futures.size(); ++i) {
        const Outcome<ExecutionResult> r = awaitFuture(futures.at(i), kWaitMs);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(!r.value.error);
        QCOMPARE(r.value.executionCount, i + 1);
    }
    QCOMPARE(futures.last().result().value.stdoutText, QStringLiteral("[1, 2, 3, 4, 5]\n"));
}

void TestLocalPythonBackend::escapeIsRefused_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    QList<std::tuple<QByteArray, QString, QString>> rows;
    const auto row = [&rows](const char *name) {
        struct Row {
            QList<std::tuple<QByteArray, QString, QString>> &rows;
            QByteArray name;
            QString code;
            Row &operator<<(const QString &text) {
                if (code.isNull())
                    code = text;
                else
                    rows.append({name, code, text});
                return *this;
            }
        };
        return Row{rows, name, {}};
    };
    QString home = QDir::homePath();
    // A home that coincides with a directory every sandbox has of its own proves nothing.
    if (home == QLatin1String("/") || home.startsWith(QLatin1String("/tmp")) ||
        home.startsWith(QLatin1String("/sandbox")))
        home = QStringLiteral("/root");
    row("write outside work dir")
        << QStringLiteral(
               "import os\nres = []\n"
               "for p in ['/usr/evil', '/etc/evil', '/evil', '/proc/evil', '/bin/evil', "
               "'/dev/evil']:\n"
               "    try:\n        open(p, 'w').write('x')\n        res.append('WROTE ' + p)\n"
               "    except OSError:\n        res.append('refused')\n"
               "print(sorted(set(res)))")
        << QStringLiteral("['refused']\n");
    row("host home and secrets absent")
        << QStringLiteral(
               "import os\nprint([os.path.exists(p) for p in "
               "['%1', '/root', '/home', '/run', '/var', '/etc/passwd', '/etc/shadow']])")
               .arg(home)
        << QStringLiteral("[False, False, False, False, False, False, False]\n");
    row("no host processes visible")
        << QStringLiteral(
               "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]) < 6,"
               " os.path.exists('/proc/%1'))")
               .arg(QCoreApplication::applicationPid() > 10 ? QCoreApplication::applicationPid()
                                                            : 99999)
        << QStringLiteral("True False\n");
    // Every set empty, the bounding set too: a bwrap of its own starts with three capabilities
    // for its driver's remounts (BubblewrapCommand::kDriverConfineCaps), which drops them.
    row("no capabilities, not root")
        << QStringLiteral("import os\ncaps = [int(l.split()[1], 16) for l in "
                          "open('/proc/self/status') if l.startswith('Cap')]\n"
                          "print(len(caps), sum(caps), os.getuid() != 0 or os.geteuid() != 0 or "
                          "'uidns')")
        << QStringLiteral("5 0 True\n");
    row("first to go when memory runs out")
        << QStringLiteral("print(open('/proc/self/oom_score_adj').read().strip())")
        << QStringLiteral("1000\n");
    row("no outside network")
        << QStringLiteral(
               "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), "
               "timeout=3)\n    print('CONNECTED')\nexcept OSError:\n    print('refused')\n"
               "try:\n    socket.getaddrinfo('example.com', 80)\n    print('RESOLVED')\n"
               "except OSError:\n    print('no dns')")
        << QStringLiteral("refused\nno dns\n");
    // Both ways in: unshare() (seccomp refuses it) and clone() with CLONE_NEWUSER, which the
    // filter lets through and only user.max_user_namespaces = 0 (set by the zygote's fork, or by
    // the driver of a bwrap of its own) stops. (Nested user namespaces do work here: the zygote's
    // forks make theirs.) Python 3.11 has no os.unshare, hence the raw calls.
    row("no new user namespace")
        << QStringLiteral("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                          "out = ['UNSHARED' if libc.syscall(%1, 0x10000000) == 0 else 'refused']\n"
                          "pid = libc.syscall(%2, 0x10000000 | 17, 0, 0, 0, 0)\n"
                          "if pid == 0:\n    os._exit(0)\n"
                          "if pid > 0:\n    os.waitpid(pid, 0)\n"
                          "out.append('CLONED' if pid > 0 else 'refused')\nprint(*out)")
               .arg(SYS_unshare)
               .arg(SYS_clone)
        << QStringLiteral("refused refused\n");
    for (const auto &[name, code, expected] : std::as_const(rows))
        for (const QString &path : paths())
            QTest::newRow(qPrintable(QString::fromLatin1(name) + u'/' + path))
                << path << code << expected;
}

void TestLocalPythonBackend::escapeIsRefused() {
    QFETCH(QString, path);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    backendFor(path);
    const SandboxHandle sandbox = createVia(path);
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r = run(sandbox, code);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    QCOMPARE(r.value.stdoutText, expected);
}

void TestLocalPythonBackend::seccompFilterBlocksKernelSurface_data() {
    QTest::addColumn<bool>("filter");
    QTest::addColumn<QString>("via");
    QTest::newRow("filtered/fresh") << true << QStringLiteral("fresh");
    QTest::newRow("filtered/pooled") << true << QStringLiteral("pooled");
    QTest::newRow("filtered/forked") << true << QStringLiteral("forked");
    QTest::newRow("filtered/forked-pooled") << true << QStringLiteral("forked-pooled");
    // Control: without the filter the same probe sees the kernel (proves the probe can fail).
    QTest::newRow("unfiltered") << false << QStringLiteral("fresh");
    QTest::newRow("unfiltered/forked") << false << QStringLiteral("forked");
}

void TestLocalPythonBackend::seccompFilterBlocksKernelSurface() {
    QFETCH(bool, filter);
    QFETCH(QString, via);
    LocalSandboxOptions options = testOptions();
    options.seccompFilter = filter;
    backendFor(via, options);
    const SandboxHandle sandbox = createVia(via);
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r =
        run(sandbox,
            QStringLiteral(
                "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                "def call(nr, *args):\n    ctypes.set_errno(0)\n    r = libc.syscall(nr, *args)\n"
                "    return ctypes.get_errno() if r == -1 else 0\n"
                "mode = [l.split()[1] for l in open('/proc/self/status') if "
                "l.startswith('Seccomp:')][0]\n"
                "fds = []\nfor f in os.listdir('/proc/self/fd'):\n    try:\n"
                "        fds.append(os.readlink('/proc/self/fd/' + f))\n    except OSError:\n"
                "        pass\n"
                "print(call(%1, 0, -3, 0), call(%2, 1, 0), mode, "
                "'LEAK' if any('seccomp' in f for f in fds) else 'clean')")
                .arg(SYS_keyctl)
                .arg(SYS_io_uring_setup));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    // errno of keyctl(GET_KEYRING_ID) and io_uring_setup(1, NULL), Seccomp mode, fd check.
    const QStringList fields = r.value.stdoutText.trimmed().split(QLatin1Char(' '));
    QCOMPARE(fields.size(), 4);
    QCOMPARE(fields.at(3), QStringLiteral("clean"));
    if (filter) {
        QCOMPARE(fields.at(0), QStringLiteral("1")); // EPERM
        QCOMPARE(fields.at(1), QStringLiteral("1"));
        QCOMPARE(fields.at(2), QStringLiteral("2"));
    } else {
        // The host itself may filter (e.g. a container runtime); only compare where it doesn't.
        QFile status(QStringLiteral("/proc/self/status"));
        QVERIFY(status.open(QIODevice::ReadOnly));
        if (status.readAll().contains("Seccomp:\t0")) {
            QCOMPARE(fields.at(2), QStringLiteral("0"));
            QVERIFY2(fields.at(0) != QLatin1String("1"), qPrintable(r.value.stdoutText));
        }
    }
}

void TestLocalPythonBackend::hostLoopbackPortIsRefused() {
    QFETCH(QString, path);
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost));
    backendFor(path);
    const SandboxHandle sandbox = createVia(path);
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import socket\ns = socket.socket()\ns.settimeout(3)\ntry:\n"
                                    "    s.connect(('127.0.0.1', %1))\n    print('CONNECTED')\n"
                                    "except OSError as e:\n    print('refused', type(e).__name__)")
                         .arg(server.serverPort()));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("refused ConnectionRefusedError\n"));
    QCoreApplication::processEvents();
    QVERIFY(!server.hasPendingConnections());
}

void TestLocalPythonBackend::canaryEnvironmentVariableIsAbsent() {
    QFETCH(QString, path);
    qputenv("LOOPSCOPE_CANARY_SECRET", "canary-7f3a9c");
    backendFor(path); // its pool starts after the variable is set
    const SandboxHandle sandbox = createVia(path);
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import os\nprint(os.environ.get('LOOPSCOPE_CANARY_SECRET', "
                                    "'absent'), 'canary-7f3a9c' in open('/proc/self/environ', "
                                    "'rb').read().decode(), sorted(os.environ)[:3])"));
    qunsetenv("LOOPSCOPE_CANARY_SECRET");
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(r.value.stdoutText.startsWith(QStringLiteral("absent False")),
             qPrintable(r.value.stdoutText));
}

void TestLocalPythonBackend::scratchSpaceIsSizeCapped_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("via");
    const QList<QPair<const char *, QString>> places{
        {"work dir", QStringLiteral("/mnt/data/big.bin")},
        {"tmp", QStringLiteral("/tmp/big.bin")},
        {"shared memory", QStringLiteral("/dev/shm/big.bin")}};
    for (const auto &[name, file] : places)
        for (const QString &via : paths())
            QTest::newRow(qPrintable(QString::fromLatin1(name) + u'/' + via)) << file << via;
}

void TestLocalPythonBackend::scratchSpaceIsSizeCapped() {
    QFETCH(QString, path);
    QFETCH(QString, via);
    LocalSandboxOptions options = testOptions();
    options.workDirBytes = 8 * LocalSandboxOptions::kMiB;
    options.tmpDirBytes = 8 * LocalSandboxOptions::kMiB;
    backendFor(via, options);
    const SandboxHandle sandbox = createVia(via);
    QVERIFY(sandbox.isValid());
    Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("open('%1', 'wb').write(b'x' * (4 * 1024 * 1024))").arg(path));
    QVERIFY2(r.ok() && !r.value.error, "a small file must fit");
    r = run(sandbox, QStringLiteral("open('%1', 'ab').write(b'x' * (16 * 1024 * 1024))").arg(path));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("OSError"));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("No space left")),
             qPrintable(r.value.error->value));
}

void TestLocalPythonBackend::forkBombIsContainedAndSandboxDeletable() {
    LocalSandboxOptions options = testOptions();
    options.maxProcesses = 24;
    options.timeoutMs = 4000;
    backend(options);
    const SandboxHandle bomb = create();
    const SandboxHandle neighbour = create();

    // Bounded first: the limit stops forks well before the machine notices.
    Outcome<ExecutionResult> r =
        run(bomb, QStringLiteral("import os, time\nn = 0\ntry:\n    while True:\n"
                                 "        if os.fork() == 0:\n            time.sleep(60)\n"
                                 "            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
                                 "    print('contained', n < 24, type(e).__name__)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    QCOMPARE(r.value.stdoutText, QStringLiteral("contained True BlockingIOError\n"));

    // The classic bomb: every child forks forever. The run times out and the tree is killed.
    auto bombRun =
        m_backend->run(bomb,
                       QStringLiteral("import os\nwhile True:\n    try:\n        os.fork()\n"
                                      "    except OSError:\n        pass"),
                       {});
    // Another sandbox keeps working meanwhile: the process limit is per sandbox.
    r = run(neighbour, QStringLiteral("import subprocess\nprint(subprocess.run(['/bin/echo', "
                                      "'ok'], capture_output=True).stdout.decode().strip())"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("ok\n"));

    r = awaitFuture(bombRun, kWaitMs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.timedOut);
    const Outcome<bool> removed = awaitFuture(m_backend->remove(bomb, {}), kWaitMs);
    QVERIFY(removed.ok() && removed.value);
    QVERIFY(!m_backend->sandboxIds().contains(bomb.id));
}

void TestLocalPythonBackend::memoryCapRaisesMemoryError() {
    LocalSandboxOptions options = testOptions();
    options.memoryLimitBytes = 512 * LocalSandboxOptions::kMiB;
    backend(options);
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("keep = 1\nblob = bytearray(1024 * 1024 * 1024)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("MemoryError"));
    r = run(sandbox, QStringLiteral("print(keep)"));
    QVERIFY(r.ok());
    QCOMPARE(r.value.stdoutText, QStringLiteral("1\n"));
}

void TestLocalPythonBackend::infiniteLoopTimesOutAndNextRunIsFresh() {
    LocalSandboxOptions options = testOptions();
    options.timeoutMs = 2000;
    backend(options);
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("state = 'old'"));
    QVERIFY(r.ok());
    const qint64 pid = m_backend->processId(sandbox.id);
    QVERIFY(processExists(pid));

    r = run(sandbox, QStringLiteral("import os\nprint('spinning')\nos.write(2, b'low-level\\n')\n"
                                    "while True:\n    pass"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.timedOut);
    // What it printed before it hung comes back too (sent by the driver just before the kill).
    QCOMPARE(r.value.stdoutText, QStringLiteral("spinning\n"));
    QCOMPARE(r.value.stderrText, QStringLiteral("low-level\n"));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("TimeoutError"));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("timed out after 2 s")),
             qPrintable(r.value.error->value));
    QCOMPARE(r.value.executionCount, 2);
    QTRY_VERIFY_WITH_TIMEOUT(!processExists(pid), 10000);
    // Only the pooled interpreters' trees (outer bwrap, bwrap init, python; or init, python)
    // and the zygote's (bwrap, its init, the zygote) may remain; the pool may have grown
    // past poolSize when the first create found its interpreter still starting.
    QTRY_VERIFY_WITH_TIMEOUT(sandboxLeftovers().size() <=
                                 3 * m_backend->pooledCount() + (m_backend->usesZygote() ? 3 : 0),
                             10000);

    // Same sandbox id, fresh interpreter, one-time notice.
    r = run(sandbox, QStringLiteral("print('state' in globals())"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("False\n"));
    QVERIFY2(r.value.stderrText.startsWith(QStringLiteral("[loopscope] This sandbox's previous "
                                                          "interpreter stopped")),
             qPrintable(r.value.stderrText));
    QCOMPARE(r.value.executionCount, 3);
    QVERIFY(m_backend->processId(sandbox.id) != pid);
    r = run(sandbox, QStringLiteral("print(1)"));
    QCOMPARE(r.value.stderrText, QString());
}

void TestLocalPythonBackend::interpreterExitIsReportedAndRecovers() {
    backend();
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("import os\nos._exit(7)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("InterpreterExited"));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("status 7")),
             qPrintable(r.value.error->value));
    r = run(sandbox, QStringLiteral("print('back')"));
    QVERIFY(r.ok());
    QCOMPARE(r.value.stdoutText, QStringLiteral("back\n"));
}

void TestLocalPythonBackend::cpuLimitKillsAndIsNamed() {
    LocalSandboxOptions options = testOptions();
    options.cpuLimitSeconds = 1;
    options.poolSize = 0;
    backend(options);
    const SandboxHandle sandbox = create();
    Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("while True:\n    pass"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(!r.value.timedOut);
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("InterpreterExited"));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("SIGXCPU")) ||
                 r.value.error->value.contains(QStringLiteral("SIGKILL")),
             qPrintable(r.value.error->value));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("CPU time limit is 1 s")),
             qPrintable(r.value.error->value));
    r = run(sandbox, QStringLiteral("print('recovered')"));
    QVERIFY(r.ok());
    QCOMPARE(r.value.stdoutText, QStringLiteral("recovered\n"));
}

void TestLocalPythonBackend::brokenBubblewrapFailsFastWithReason() {
    // bwrap exists but cannot start a sandbox (as when a container forbids user namespaces).
    LocalSandboxOptions options = testOptions();
    options.bwrapPath = QStringLiteral("/bin/false");
    options.poolSize = 2;
    backend(options);
    const Outcome<SandboxHandle> created = awaitFuture(m_backend->create({}), kWaitMs);
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(QStringLiteral("failed to start")), qPrintable(created.error));
    const SandboxSelfTest self = m_backend->selfTest();
    QVERIFY(!self.available);
    QVERIFY2(self.problems.join(QLatin1Char('\n')).contains(QStringLiteral("probe sandbox")),
             qPrintable(self.problems.join(QLatin1Char('\n'))));
    // The pool gives up instead of restarting a broken command forever: once it has, a refill
    // (one may still be scheduled by the last failure) starts nothing, so an empty pool stays
    // empty.
    QTRY_VERIFY_WITH_TIMEOUT(m_backend->poolGaveUp(), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->pooledCount(), 0, kWaitMs);
}

void TestLocalPythonBackend::hugeOutputIsCapped_data() {
    QTest::addColumn<QString>("code");
    QTest::addColumn<bool>("onStderr");
    QTest::newRow("print 50 MiB in one call")
        << QStringLiteral("print('x' * (50 * 1024 * 1024))") << false;
    QTest::newRow("50 x 1 MiB writes")
        << QStringLiteral(
               "import sys\nfor _ in range(50):\n    sys.stdout.write('y' * 1024 * 1024)")
        << false;
    QTest::newRow("child process writes 50 MiB")
        << QStringLiteral("import subprocess\nsubprocess.run(['/bin/sh', '-c', "
                          "'head -c 52428800 /dev/zero | tr \"\\\\0\" z'])")
        << false;
    QTest::newRow("stderr 50 MiB")
        << QStringLiteral("import sys\nsys.stderr.write('e' * (50 * 1024 * 1024))") << true;
}

void TestLocalPythonBackend::hugeOutputIsCapped() {
    QFETCH(QString, code);
    QFETCH(bool, onStderr);
    backend();
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r = run(sandbox, code);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    const QString text = onStderr ? r.value.stderrText : r.value.stdoutText;
    QVERIFY(onStderr ? r.value.stderrTruncated : r.value.stdoutTruncated);
    // The first MiB exactly as printed (one character repeated), nothing appended to it; the
    // cut is told to the model in a note.
    QCOMPARE(text.size(), 1024 * 1024);
    QCOMPARE(text.count(text.at(0)), text.size());
    QCOMPARE(r.value.notes.size(), 1);
    QVERIFY2(r.value.notes.at(0).startsWith(
                 QStringLiteral("[loopscope] %1 truncated: ")
                     .arg(onStderr ? QStringLiteral("stderr") : QStringLiteral("stdout"))),
             qPrintable(r.value.notes.at(0)));
    QVERIFY2(r.value.notes.at(0).endsWith(QStringLiteral("the limit is 1048576 bytes")),
             qPrintable(r.value.notes.at(0)));
}

void TestLocalPythonBackend::outputCapsAreConfigurable() {
    LocalSandboxOptions options = testOptions();
    options.stdoutCapBytes = 10;
    options.stderrCapBytes = 5;
    backend(options);
    const SandboxHandle sandbox = create();
    const Outcome<ExecutionResult> r =
        run(sandbox,
            QStringLiteral("import sys\nprint('0123456789ABCDEF')\nsys.stderr.write('abcdefgh')"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("0123456789"));
    QCOMPARE(r.value.stderrText, QStringLiteral("abcde"));
    QVERIFY(r.value.stdoutTruncated && r.value.stderrTruncated);
    QCOMPARE(r.value.notes,
             (QStringList{QStringLiteral("[loopscope] stdout truncated: 7 more bytes not shown; "
                                         "the limit is 10 bytes"),
                          QStringLiteral("[loopscope] stderr truncated: 3 more bytes not shown; "
                                         "the limit is 5 bytes")}));
}

void TestLocalPythonBackend::twentySandboxesInParallel() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 2;
    backend(options);
    QList<QFuture<Outcome<SandboxHandle>>> creating;
    for (int i = 0; i < 20; ++i)
        creating << m_backend->create({});
    QList<SandboxHandle> sandboxes;
    QSet<qint64> pids;
    for (const auto &future : creating) {
        const Outcome<SandboxHandle> created = awaitFuture(future, 120000);
        QVERIFY2(created.ok(), qPrintable(created.error));
        sandboxes << created.value;
        pids.insert(m_backend->processId(created.value.id));
    }
    QCOMPARE(pids.size(), 20);
    QList<QFuture<Outcome<ExecutionResult>>> runs;
    for (int i = 0; i < sandboxes.size(); ++i)
        runs << m_backend->run(sandboxes.at(i), QStringLiteral("mine = %1").arg(i), {});
    for (const auto &future : runs)
        QVERIFY(awaitFuture(future, 120000).ok());
    runs.clear();
    for (const SandboxHandle &sandbox : sandboxes)
        runs << m_backend->run(sandbox, QStringLiteral("print(mine)"), {});
    for (int i = 0; i < runs.size(); ++i) {
        const Outcome<ExecutionResult> r = awaitFuture(runs.at(i), 120000);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.value.stdoutText, QStringLiteral("%1\n").arg(i));
    }
    QList<QFuture<Outcome<bool>>> removals;
    for (const SandboxHandle &sandbox : sandboxes)
        removals << m_backend->remove(sandbox, {});
    for (const auto &future : removals)
        QVERIFY(awaitFuture(future, kWaitMs).value);
    QCOMPARE(m_backend->sandboxIds().size(), 0);
}

void TestLocalPythonBackend::poolHandsOutEachInterpreterOnce() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 2;
    backend(options);
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 2, kWaitMs);
    const QList<qint64> pooled = m_backend->pooledProcessIds();
    QSet<qint64> handedOut;
    for (int i = 0; i < 6; ++i) {
        const SandboxHandle sandbox = create();
        QVERIFY(sandbox.isValid());
        const qint64 pid = m_backend->processId(sandbox.id);
        QVERIFY(pid > 0);
        QVERIFY2(!handedOut.contains(pid), "an interpreter was handed out twice");
        handedOut.insert(pid);
        if (i < 2)
            QVERIFY2(pooled.contains(pid), "create did not take a warm interpreter");
        for (qint64 inPool : m_backend->pooledProcessIds())
            QVERIFY2(!handedOut.contains(inPool), "a handed-out interpreter is still pooled");
        // Each sandbox really is its own interpreter.
        const Outcome<ExecutionResult> r =
            run(sandbox, QStringLiteral("print('owner' in globals())\nowner = %1").arg(i));
        QCOMPARE(r.value.stdoutText, QStringLiteral("False\n"));
    }
    // Refilled in the background (to at least its size: the creates that waited grew it).
    QTRY_VERIFY_WITH_TIMEOUT(m_backend->readyPoolCount() >= 2, kWaitMs);
}

namespace {
// Nice value of a process (field 19 of /proc/<pid>/stat), or 99 when it is gone.
int niceOf(qint64 pid) {
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return 99;
    const QByteArray line = stat.readAll();
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 16 ? fields.at(16).toInt() : 99;
}

// Direct children of `pid` (from /proc/<pid>/task/<pid>/children).
QList<qint64> childrenOf(qint64 pid) {
    QFile file(QStringLiteral("/proc/%1/task/%1/children").arg(pid));
    QList<qint64> out;
    if (file.open(QIODevice::ReadOnly))
        for (const QByteArray &c : file.readAll().split(' '))
            if (c.trimmed().toLongLong() > 0)
                out << c.trimmed().toLongLong();
    return out;
}
} // namespace

void TestLocalPythonBackend::poolGrowsUnderDemandAndShrinksWhenIdle() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 1;
    options.poolMaxSize = 3;
    options.poolIdleMs = 8000; // long enough for the refill to finish first on a loaded box
    backend(options);
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 1, kWaitMs);
    QCOMPARE(m_backend->poolTarget(), 1);
    // A burst: the first create takes the warm interpreter, the next two have to wait.
    QList<QFuture<Outcome<SandboxHandle>>> burst;
    for (int i = 0; i < 3; ++i)
        burst << m_backend->create({});
    QCOMPARE(m_backend->poolTarget(), 3);
    for (const auto &created : std::as_const(burst))
        QVERIFY(awaitFuture(created, kWaitMs).ok());
    // The pool refills to its grown size...
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 3, kWaitMs);
    const QList<qint64> grown = m_backend->pooledProcessIds();
    // ...and, with no create waiting for poolIdleMs, shrinks back, killing the surplus.
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->pooledCount(), 1, kWaitMs);
    QCOMPARE(m_backend->poolTarget(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            int dead = 0;
            for (qint64 pid : grown)
                dead += processExists(pid) ? 0 : 1;
            return dead == 2;
        }(),
        kWaitMs);
    // The sandboxes created in the burst are untouched by the shrink.
    QCOMPARE(m_backend->sandboxIds().size(), 3);
    for (const QString &id : m_backend->sandboxIds())
        QVERIFY(m_backend->processId(id) > 0);
}

void TestLocalPythonBackend::pooledInterpretersStartAtLowerPriority() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 1;
    options.poolNice = 10;
    backend(options);
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 1, kWaitMs);
    const qint64 pooled = m_backend->pooledProcessIds().first();
    QCOMPARE(niceOf(pooled), 10);
    for (qint64 child : childrenOf(pooled))
        QCOMPARE(niceOf(child), 10);
    const SandboxHandle sandbox = create();
    QCOMPARE(m_backend->processId(sandbox.id), pooled);
    const Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("import os\nprint(os.nice(0))"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    // Raising the priority back needs CAP_SYS_NICE (as root) or RLIMIT_NICE; without either the
    // handed-out sandbox keeps the pool's lower priority.
    const bool canRaise = ::geteuid() == 0;
    QCOMPARE(r.value.stdoutText, canRaise ? QStringLiteral("0\n") : QStringLiteral("10\n"));
    // Its replacement in the pool starts low again.
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 1, kWaitMs);
    QCOMPARE(niceOf(m_backend->pooledProcessIds().first()), 10);
}

void TestLocalPythonBackend::killingASandboxLeavesNoZombie() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 0;
    options.zygote = false; // bwrap's own tree; forkedSandboxGoesWithEveryProcess for the other
    backend(options);
    const SandboxHandle sandbox = create();
    const qint64 outer = m_backend->processId(sandbox.id);
    const QList<qint64> inner = childrenOf(outer); // the PID-namespace init
    QCOMPARE(inner.size(), 1);
    QVERIFY(processExists(inner.first()));
    QVERIFY(awaitFuture(m_backend->remove(sandbox, {}), kWaitMs).ok());
    // remove() finishes once the outer bwrap is reaped. By then the init is gone too, not even
    // a zombie: the outer bwrap reaped it before exiting. (Killing the outer one first orphans
    // the init: a `[bwrap] <defunct>` until the system's reaper of orphans gets to it, if ever.)
    QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(inner.first())));
    QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(outer)));
}

void TestLocalPythonBackend::forkedSandboxGoesWithEveryProcess() {
    const SandboxHandle sandbox = createForkedWithoutPool();
    QVERIFY(sandbox.isValid());
    // A background child that would outlive a careless delete.
    QVERIFY(
        run(sandbox, QStringLiteral("import subprocess\nsubprocess.Popen(['/bin/sleep', '300'])"))
            .ok());
    // PID-namespace init → interpreter → sleep, as the host sees them; the init is the zygote's
    // child.
    const qint64 init = m_backend->processId(sandbox.id);
    const qint64 zygote = m_backend->zygoteProcessId();
    QList<qint64> tree{init};
    for (int depth = 0; depth < 2; ++depth) {
        QTRY_COMPARE_WITH_TIMEOUT(childrenOf(tree.last()).size(), 1, 10000);
        tree << childrenOf(tree.last()).first();
    }
    // (Popen's child is a forked python until its exec.)
    QTRY_VERIFY2_WITH_TIMEOUT(commandLineOf(tree.last()).startsWith("/bin/sleep"),
                              commandLineOf(tree.last()).constData(), 10000);
    QVERIFY(processExists(zygote));
    QVERIFY(awaitFuture(m_backend->remove(sandbox, {}), kWaitMs).value);
    // remove() finishes once the zygote reported the init killed and reaped, so the namespace
    // is empty and no zombie of it is left.
    for (qint64 pid : std::as_const(tree))
        QVERIFY2(!QFile::exists(QStringLiteral("/proc/%1").arg(pid)),
                 qPrintable(QString::number(pid)));
    // What stays: the zygote in its bwrap (outer bwrap, its init, the zygote), for the next one.
    QTRY_COMPARE_WITH_TIMEOUT(sandboxLeftovers().size(), 3, 10000);
    QVERIFY(processExists(zygote));
}

void TestLocalPythonBackend::zygoteDeathEndsItsSandboxesAndANewOneServes() {
    const SandboxHandle sandbox = createForkedWithoutPool();
    QVERIFY(run(sandbox, QStringLiteral("state = 'old'")).ok());
    const qint64 init = m_backend->processId(sandbox.id);
    const qint64 zygote = m_backend->zygoteProcessId();
    QVERIFY(processExists(init));
    // The zygote's bwrap leads its process group: all of the zygote goes at once.
    QCOMPARE(::kill(-static_cast<pid_t>(zygote), SIGKILL), 0);
    // Its sandboxes go with it (each init has the zygote's death as its parent-death signal).
    QTRY_VERIFY_WITH_TIMEOUT(!processExists(init), 10000);
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 10000);
    // The sandbox id lives on with a fresh interpreter from a new zygote.
    const Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("print('state' in globals())"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("False\n"));
    QVERIFY2(r.value.stderrText.startsWith(QStringLiteral("[loopscope] This sandbox's previous "
                                                          "interpreter stopped")),
             qPrintable(r.value.stderrText));
    QVERIFY(m_backend->usesZygote());
    QVERIFY(m_backend->zygoteProcessId() > 0);
    QVERIFY(m_backend->zygoteProcessId() != zygote);
}

void TestLocalPythonBackend::forkedSandboxesDrawTheirOwnRandomness() {
    // Forks share the zygote's memory, but nothing random is drawn there: `random` is seeded in
    // each sandbox when user code imports it, and the interpreter's own state is fresh per fork.
    const QString code =
        QStringLiteral("import random, tempfile, uuid\nprint(random.random(), uuid.uuid4(), "
                       "tempfile.mkdtemp())");
    QList<SandboxHandle> sandboxes{createForkedWithoutPool(), create(), create()};
    QSet<QString> seen;
    for (const SandboxHandle &sandbox : std::as_const(sandboxes)) {
        const Outcome<ExecutionResult> r = run(sandbox, code);
        QVERIFY2(r.ok() && !r.value.error, qPrintable(r.error));
        seen.insert(r.value.stdoutText);
    }
    QCOMPARE(seen.size(), 3);
}

void TestLocalPythonBackend::forkedSandboxHoldsNoneOfTheZygotesDescriptors() {
    // The zygote's fd 0 is its control socket (a sandbox holding it could order forks) and its
    // fd 2 goes to the proxy's log (a sandbox holding it could write there): once the driver
    // has wired its streams, no process inside the sandbox may hold either.
    const SandboxHandle sandbox = createForkedWithoutPool();
    QVERIFY(run(sandbox, QStringLiteral("print(1)")).ok());
    QList<qint64> zygote{m_backend->zygoteProcessId()}; // bwrap → its init → the zygote
    for (int depth = 0; depth < 2; ++depth) {
        QCOMPARE(childrenOf(zygote.last()).size(), 1);
        zygote << childrenOf(zygote.last()).first();
    }
    // The raw link ("pipe:[123]"): QFile::symLinkTarget would make it a path under each
    // process's own fd directory, and no two would ever compare equal.
    const auto link = [](qint64 pid, const QString &fd) {
        const QByteArray path = QStringLiteral("/proc/%1/fd/%2").arg(pid).arg(fd).toLocal8Bit();
        char target[256];
        const ssize_t n = ::readlink(path.constData(), target, sizeof target);
        return n > 0 ? QString::fromLocal8Bit(target, int(n)) : QString();
    };
    const QString control = link(zygote.last(), QStringLiteral("0"));
    const QString log = link(zygote.last(), QStringLiteral("2"));
    QVERIFY2(control.startsWith(QLatin1String("socket:")), qPrintable(control));
    QVERIFY2(log.startsWith(QLatin1String("pipe:")), qPrintable(log));
    const qint64 init = m_backend->processId(sandbox.id);
    QCOMPARE(childrenOf(init).size(), 1);
    const qint64 interpreter = childrenOf(init).first();
    for (qint64 pid : {init, interpreter}) {
        const QStringList fds =
            QDir(QStringLiteral("/proc/%1/fd").arg(pid))
                .entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::System);
        QVERIFY2(!fds.isEmpty(), "cannot read the sandbox's descriptors");
        for (const QString &fd : fds) {
            const QString target = link(pid, fd);
            QVERIFY2(target != control && target != log,
                     qPrintable(QStringLiteral("pid %1 fd %2 -> %3").arg(pid).arg(fd, target)));
        }
    }
}

void TestLocalPythonBackend::forkedSandboxSeesNoneOfTheZygotesFiles() {
    // The zygote's C extension sits in the zygote's /tmp (bwrap copied it there); a sandbox's
    // own tmpfs on /tmp covers it, and no other path leads to it.
    const SandboxHandle sandbox = createForkedWithoutPool();
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import os, sys\n"
                                    "print(sorted(os.listdir('/tmp')), '_loopscope_zygote' in "
                                    "sys.modules, os.path.exists('%1'))")
                         .arg(QString::fromLatin1(BubblewrapCommand::kZygoteModulePath)));
    QVERIFY2(r.ok() && !r.value.error, qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("[] False False\n"));
}

void TestLocalPythonBackend::poolCanBeDisabled() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 0;
    backend(options);
    // Whatever the constructor queued has run once a marker queued after it has; and with no
    // refill scheduled an empty pool stays empty.
    bool drained = false;
    QTimer::singleShot(0, m_backend.get(), [&drained] { drained = true; });
    QTRY_VERIFY(drained);
    QVERIFY(!m_backend->refillPending());
    QCOMPARE(m_backend->pooledCount(), 0);
    QVERIFY(sandboxLeftovers().isEmpty());
    const SandboxHandle sandbox = create();
    QVERIFY(sandbox.isValid());
    QCOMPARE(run(sandbox, QStringLiteral("print(6 * 7)")).value.stdoutText, QStringLiteral("42\n"));
    QCOMPARE(m_backend->pooledCount(), 0);
    // A burst of waiting creates grows a pool (poolGrowsUnderDemandAndShrinksWhenIdle), but not
    // one that is off: every sandbox is started for its create, nothing is kept ahead.
    QList<QFuture<Outcome<SandboxHandle>>> burst;
    for (int i = 0; i < 3; ++i)
        burst << m_backend->create({});
    QCOMPARE(m_backend->poolTarget(), 0);
    for (const auto &created : std::as_const(burst))
        QVERIFY(awaitFuture(created, kWaitMs).ok());
    QVERIFY(!m_backend->refillPending()); // nothing will start one later either
    QCOMPARE(m_backend->pooledCount(), 0);
    QCOMPARE(m_backend->sandboxIds().size(), 4);
}

void TestLocalPythonBackend::shutdownWhilePoolIsStartingLeavesNothing() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 3;
    backend(options);
    // The refill runs from the event loop: the interpreters are started, not ready yet.
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->pooledCount(), 3, kWaitMs);
    const QList<qint64> pids = m_backend->pooledProcessIds();
    QVERIFY(!sandboxLeftovers().isEmpty());
    m_backend.reset();
    // A forked interpreter is killed by its zygote (the lifeline closed, then the zygote's own
    // end as parent-death signal), asynchronously: wait for each to be gone, within a bound.
    for (qint64 pid : pids)
        QTRY_VERIFY2_WITH_TIMEOUT(!processExists(pid), "a pooled interpreter outlived its backend",
                                  10000);
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

void TestLocalPythonBackend::createIsServedWhileARefillIsHeldAndShutdownReapsIt() {
    // One bwrap per sandbox: a refill forks and execs on the spawn thread, where the hook holds
    // it after the start, before the interpreter is handed back. Refilled on this thread (as
    // before), the hold would hold the create below too.
    LocalSandboxOptions options = testOptions();
    options.zygote = false;
    options.poolSize = 1;
    const auto entered = std::make_shared<QSemaphore>();
    const auto released = std::make_shared<QSemaphore>();
    options.afterPoolSpawn = [entered, released] {
        entered->release();
        released->acquire();
    };
    backend(options);
    const auto releaseAll = qScopeGuard([released] { released->release(1000); });
    // The refill is scheduled from this thread's event loop (once the driver is compiled).
    QVERIFY(QTest::qWaitFor([&entered] { return entered->tryAcquire(); }, kWaitMs));
    QCOMPARE(m_backend->pooledCount(), 0); // started, not handed back
    QVERIFY(m_backend->refillPending());
    QVERIFY(!sandboxLeftovers().isEmpty()); // its bwrap runs

    // A create meanwhile waits for its own interpreter only.
    const SandboxHandle sandbox = create();
    QVERIFY(sandbox.isValid());
    QCOMPARE(run(sandbox, QStringLiteral("print(6 * 7)")).value.stdoutText, QStringLiteral("42\n"));
    QCOMPARE(m_backend->pooledCount(), 0); // the refill is still held

    // Let it go and shut down before this thread turns its event loop again: the interpreter
    // is in flight to the backend (started, not adopted) and must not outlive it.
    released->release(1000);
    m_backend.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

// The resource limits are the sandbox's own whichever way it came: a pooled interpreter was
// started before anyone asked for it, but with the same launch (and so the same limits).
void TestLocalPythonBackend::limitsHoldOnBothPaths() {
    QFETCH(QString, path);
    LocalSandboxOptions options = testOptions();
    options.memoryLimitBytes = 600 * LocalSandboxOptions::kMiB;
    options.maxOpenFiles = 100;
    options.maxProcesses = 20;
    options.maxFileBytes = 5 * LocalSandboxOptions::kMiB;
    options.cpuLimitSeconds = 77;
    backendFor(path, options);
    const SandboxHandle sandbox = createVia(path);
    QVERIFY(sandbox.isValid());
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import resource as r\nprint([r.getrlimit(x)[0] for x in "
                                    "(r.RLIMIT_AS, r.RLIMIT_NOFILE, r.RLIMIT_NPROC, "
                                    "r.RLIMIT_FSIZE, r.RLIMIT_CPU)])"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    QCOMPARE(r.value.stdoutText, QStringLiteral("[%1, 100, 20, %2, 77]\n")
                                     .arg(600 * LocalSandboxOptions::kMiB)
                                     .arg(5 * LocalSandboxOptions::kMiB));
}

// What one sandbox leaves behind — files in each writable place, interpreter globals, module
// state, environment, a background process — is invisible to the next one, whether it came
// from the pool or was started cold, and while the first one is still alive.
void TestLocalPythonBackend::noStateCrossesSandboxes() {
    QFETCH(QString, path);
    backendFor(path);
    const SandboxHandle first = createVia(path);
    QVERIFY(first.isValid());
    Outcome<ExecutionResult> r = run(
        first, QStringLiteral(
                   "import os, sys, json, builtins, subprocess\n"
                   "for p in ('/mnt/data/mark', '/tmp/mark', '/dev/shm/mark'):\n"
                   "    open(p, 'w').write('first')\n"
                   "leaked = 1\nbuiltins.leaked = 1\njson.leaked = 1\nsys.path.append('/leak')\n"
                   "os.environ['LEAKED'] = '1'\n"
                   "subprocess.Popen(['/bin/sleep', '300'])\n"
                   "print(sorted(os.listdir('/mnt/data')), os.getpid())"));
    QVERIFY2(r.ok() && !r.value.error, qPrintable(r.error));
    QVERIFY2(r.value.stdoutText.startsWith(QStringLiteral("['mark']")),
             qPrintable(r.value.stdoutText));

    const SandboxHandle second = createVia(path);
    QVERIFY(second.isValid());
    QVERIFY(m_backend->processId(second.id) != m_backend->processId(first.id));
    r = run(second, QStringLiteral(
                        "import os, sys, json, builtins\n"
                        "print([os.path.exists(p) for p in ('/mnt/data/mark', '/tmp/mark', "
                        "'/dev/shm/mark')], 'leaked' in globals(), hasattr(builtins, 'leaked'), "
                        "hasattr(json, 'leaked'), '/leak' in sys.path, 'LEAKED' in os.environ, "
                        "any(open('/proc/%s/cmdline' % p, 'rb').read().startswith(b'/bin/sleep') "
                        "for p in os.listdir('/proc') if p.isdigit()))"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY2(!r.value.error, r.value.error ? qPrintable(r.value.error->traceback) : "");
    QCOMPARE(r.value.stdoutText,
             QStringLiteral("[False, False, False] False False False False False False\n"));
    // Control: the first sandbox still has all of it (the probe can see what it looks for).
    r = run(first, QStringLiteral("import os, sys, json, builtins\n"
                                  "print([os.path.exists(p) for p in ('/mnt/data/mark', "
                                  "'/tmp/mark', '/dev/shm/mark')], 'leaked' in globals(), "
                                  "hasattr(builtins, 'leaked'), hasattr(json, 'leaked'), "
                                  "'/leak' in sys.path, 'LEAKED' in os.environ)"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("[True, True, True] True True True True True\n"));
}

void TestLocalPythonBackend::removeKillsTreeAndIsIdempotent() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 0;
    options.zygote = false; // see forkedSandboxGoesWithEveryProcess
    backend(options);
    const SandboxHandle sandbox = create();
    // A background child that would outlive a careless delete.
    QVERIFY(
        run(sandbox, QStringLiteral("import subprocess\nsubprocess.Popen(['/bin/sleep', '300'])"))
            .ok());
    QTRY_VERIFY_WITH_TIMEOUT(sandboxLeftovers().size() >= 3, 10000);
    const qint64 pid = m_backend->processId(sandbox.id);
    Outcome<bool> removed = awaitFuture(m_backend->remove(sandbox, {}), kWaitMs);
    QVERIFY(removed.ok());
    QVERIFY(removed.value);
    QVERIFY(!processExists(pid));
    QTRY_VERIFY_WITH_TIMEOUT(sandboxLeftovers().isEmpty(), 20000);
    removed = awaitFuture(m_backend->remove(sandbox, {}), 1000);
    QVERIFY(removed.ok());
    QVERIFY(!removed.value);
    const Outcome<ExecutionResult> r = run(sandbox, QStringLiteral("print(1)"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error.contains(sandbox.id), qPrintable(r.error));
}

void TestLocalPythonBackend::removeWhileRunningEndsTheRun() {
    backend();
    const SandboxHandle sandbox = create();
    auto running = m_backend->run(sandbox, QStringLiteral("import time\ntime.sleep(300)"), {});
    auto queued = m_backend->run(sandbox, QStringLiteral("print('never')"), {});
    QTest::qWait(300);
    QVERIFY(awaitFuture(m_backend->remove(sandbox, {}), kWaitMs).value);
    const Outcome<ExecutionResult> r = awaitFuture(running, kWaitMs);
    QVERIFY(!r.ok());
    QVERIFY2(r.error.contains(QStringLiteral("deleted")), qPrintable(r.error));
    const Outcome<ExecutionResult> q = awaitFuture(queued, kWaitMs);
    QVERIFY(!q.ok());
}

// The client went away: SIGINT reaches the spinning code as a KeyboardInterrupt, the run
// returns what it printed, and the same interpreter keeps its variables.
void TestLocalPythonBackend::cancelInterruptsTheRunAndKeepsState() {
    QFETCH(QString, path);
    backendFor(path);
    const SandboxHandle sandbox = createVia(path);
    QVERIFY(sandbox.isValid());
    QVERIFY(run(sandbox, QStringLiteral("kept = 41")).ok());
    const qint64 pid = m_backend->processId(sandbox.id);
    const Outcome<ExecutionResult> r = cancelOnceItPrints(
        sandbox, QStringLiteral("print('spinning', flush=True)\nwhile True:\n    pass"),
        QStringLiteral("spinning"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("KeyboardInterrupt"));
    QVERIFY2(r.value.error->traceback.contains(QStringLiteral("<cell")),
             qPrintable(r.value.error->traceback));
    QCOMPARE(r.value.stdoutText, QStringLiteral("spinning\n"));
    QVERIFY(!r.value.timedOut);
    QCOMPARE(m_backend->processId(sandbox.id), pid);
    const Outcome<ExecutionResult> after = run(sandbox, QStringLiteral("print(kept + 1)"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("42\n"));
    QCOMPARE(after.value.stderrText, QString()); // no "fresh interpreter" notice
}

void TestLocalPythonBackend::cancelOfCodeThatWillNotStopKillsTheInterpreter_data() {
    QTest::addColumn<QString>("code");
    QTest::newRow("ignores SIGINT")
        << QStringLiteral("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                          "print('stubborn', flush=True)\nwhile True:\n    pass");
    QTest::newRow("catches KeyboardInterrupt")
        << QStringLiteral("print('stubborn', flush=True)\nwhile True:\n    try:\n"
                          "        while True:\n            pass\n"
                          "    except KeyboardInterrupt:\n        pass");
}

// Code that does not let itself be interrupted loses its interpreter after the grace period
// (the CPU is free again); the sandbox serves the next run with a fresh one.
void TestLocalPythonBackend::cancelOfCodeThatWillNotStopKillsTheInterpreter() {
    QFETCH(QString, code);
    backend();
    const SandboxHandle sandbox = create();
    QVERIFY(run(sandbox, QStringLiteral("kept = 1")).ok());
    const qint64 pid = m_backend->processId(sandbox.id);
    const Outcome<ExecutionResult> r =
        cancelOnceItPrints(sandbox, code, QStringLiteral("stubborn"));
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.value.error);
    QCOMPARE(r.value.error->name, QStringLiteral("KeyboardInterrupt"));
    QVERIFY2(r.value.error->value.contains(QStringLiteral("did not stop")),
             qPrintable(r.value.error->value));
    QTRY_VERIFY_WITH_TIMEOUT(!processExists(pid), kWaitMs);
    const Outcome<ExecutionResult> after =
        run(sandbox, QStringLiteral("print('kept' in globals())"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("False\n"));
}

// A run still queued behind another is dropped by its cancel: it never runs.
void TestLocalPythonBackend::cancelledQueuedRunNeverRuns() {
    backend();
    const SandboxHandle sandbox = create();
    const CancellationToken first = Cancellation::create();
    const CancellationToken second = Cancellation::create();
    QString live;
    auto running = m_backend->run(
        sandbox, QStringLiteral("print('first', flush=True)\nwhile True:\n    pass"), {},
        [&live](const QString &, const QString &text) { live += text; }, first);
    auto queued = m_backend->run(sandbox, QStringLiteral("ran = True"), {}, {}, second);
    QTRY_VERIFY_WITH_TIMEOUT(live.contains(QStringLiteral("first")), kWaitMs);
    second->cancel();
    const Outcome<ExecutionResult> dropped = awaitFuture(queued, kWaitMs);
    QVERIFY(!dropped.ok());
    QCOMPARE(dropped.error, SandboxBackend::kRunCancelled);
    QVERIFY(!running.isFinished());
    first->cancel();
    QVERIFY(awaitFuture(running, kWaitMs).ok());
    const Outcome<ExecutionResult> after =
        run(sandbox, QStringLiteral("print('ran' in globals())"));
    QCOMPARE(after.value.stdoutText, QStringLiteral("False\n"));
}

void TestLocalPythonBackend::destructorKillsEverything() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 2;
    options.poolMaxSize = 2; // a fixed pool: the wait below is for exactly two
    options.timeoutMs = 0;   // the spinning run must still be running at the shutdown
    backend(options);
    QList<SandboxHandle> sandboxes;
    for (int i = 0; i < 3; ++i)
        sandboxes << create();
    auto running = m_backend->run(sandboxes.first(), QStringLiteral("while True:\n    pass"), {});
    QTRY_COMPARE_WITH_TIMEOUT(m_backend->readyPoolCount(), 2, kWaitMs);
    QVERIFY(!sandboxLeftovers().isEmpty());
    QVERIFY(!running.isFinished());
    m_backend->shutdown();
    // shutdown answers the run in flight with an error instead of leaving it hanging.
    QVERIFY(running.isFinished());
    QVERIFY(!running.result().ok());
    QVERIFY(!awaitFuture(m_backend->create({}), 1000).ok());
    m_backend.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

void TestLocalPythonBackend::destroyedWithWorkPending() {
    LocalSandboxOptions options = testOptions();
    options.poolSize = 2;
    backend(options);
    const SandboxHandle a = create();
    const SandboxHandle b = create();
    auto running = m_backend->run(a, QStringLiteral("import time\ntime.sleep(300)"), {});
    auto queued = m_backend->run(a, QStringLiteral("print(1)"), {});
    QTest::qWait(200);
    // Deleting the sandbox whose run is in flight, without waiting for the kill to land.
    auto removing = m_backend->remove(a, {});
    auto creating = m_backend->create({});
    auto creatingCold = m_backend->create({});
    QVERIFY(m_backend->sandboxIds().contains(b.id));
    // Destroyed with a run in flight, a run queued, a delete and two creates unfinished.
    m_backend.reset();
    for (const auto &future : {running, queued})
        QVERIFY(future.isFinished() || future.isCanceled());
    QCoreApplication::processEvents();
    QVERIFY(removing.isFinished() || removing.isCanceled());
    QVERIFY(creating.isFinished() || creating.isCanceled());
    QVERIFY(creatingCold.isFinished() || creatingCold.isCanceled());
    // cleanup() proves nothing is left.
}

void TestLocalPythonBackend::livesOnItsOwnThread() {
    // As in the app: the backend lives on the proxy thread; others only watch its futures.
    QThread proxyThread;
    LocalSandboxOptions options = testOptions();
    options.poolSize = 2;
    auto *local = new LocalPythonBackend(options);
    local->moveToThread(&proxyThread);
    proxyThread.start();
    const auto onProxyThread = [local](auto call) {
        QMetaObject::invokeMethod(local, call, Qt::BlockingQueuedConnection);
    };
    QList<QFuture<Outcome<SandboxHandle>>> creating;
    onProxyThread([&] {
        for (int i = 0; i < 3; ++i)
            creating << local->create({});
    });
    QList<SandboxHandle> sandboxes;
    for (const auto &future : creating) {
        const Outcome<SandboxHandle> created = awaitFuture(future, kWaitMs);
        QVERIFY2(created.ok(), qPrintable(created.error));
        sandboxes << created.value;
    }
    QFuture<Outcome<ExecutionResult>> ran;
    onProxyThread([&] { ran = local->run(sandboxes.at(1), QStringLiteral("print(2 ** 10)"), {}); });
    const Outcome<ExecutionResult> r = awaitFuture(ran, kWaitMs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("1024\n"));
    QFuture<Outcome<bool>> removed;
    onProxyThread([&] { removed = local->remove(sandboxes.at(0), {}); });
    QVERIFY(awaitFuture(removed, kWaitMs).value);
    onProxyThread([&] { delete local; });
    proxyThread.quit();
    QVERIFY(proxyThread.wait(kWaitMs));
    // cleanup() proves the other sandboxes and the pool died with the backend.
}

void TestLocalPythonBackend::unisolatedNeedsExplicitSwitchAndIsFlagged() {
    LocalSandboxOptions options = testOptions();
    options.bwrapPath = QStringLiteral("/nonexistent/bwrap");
    options.poolSize = 0;
    backend(options);
    QVERIFY(!awaitFuture(m_backend->create({}), 1000).ok());

    options.allowUnisolated = true;
    qputenv("LOOPSCOPE_CANARY_SECRET", "canary-unisolated");
    backend(options);
    QVERIFY(!m_backend->isIsolated());
    const SandboxSelfTest self = m_backend->selfTest();
    QVERIFY(self.available);
    QVERIFY2(self.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("isolation disabled")),
             qPrintable(self.warnings.join(QLatin1Char('\n'))));
    const SandboxHandle sandbox = create();
    QVERIFY(sandbox.isValid());
    QCOMPARE(sandbox.details.value(QStringLiteral("isolated")).toBool(), false);
    const Outcome<ExecutionResult> r =
        run(sandbox, QStringLiteral("import os\nprint(os.getcwd())\n"
                                    "print(os.environ.get('LOOPSCOPE_CANARY_SECRET', 'absent'))"));
    qunsetenv("LOOPSCOPE_CANARY_SECRET");
    QVERIFY2(r.ok(), qPrintable(r.error));
    const QStringList lines = r.value.stdoutText.split(QLatin1Char('\n'));
    const QString workDir = lines.value(0);
    QVERIFY2(workDir.contains(QStringLiteral("loopscope-sandbox-")), qPrintable(workDir));
    QCOMPARE(lines.value(1), QStringLiteral("absent"));
    QVERIFY(QDir(workDir).exists());
    // Process limits still hold (counted machine-wide for the uid, so only roughly per sandbox).
    const Outcome<ExecutionResult> bomb =
        run(sandbox, QStringLiteral("import os, time\nn = 0\ntry:\n    while n < 500:\n"
                                    "        if os.fork() == 0:\n            time.sleep(30)\n"
                                    "            os._exit(0)\n        n += 1\nexcept OSError:\n"
                                    "    print('contained', n < 500)"));
    QVERIFY2(bomb.ok(), qPrintable(bomb.error));
    QCOMPARE(bomb.value.stdoutText, QStringLiteral("contained True\n"));
    QVERIFY(awaitFuture(m_backend->remove(sandbox, {}), kWaitMs).value);
    QVERIFY2(!QDir(workDir).exists(), "delete must remove the work dir");
}

QTEST_GUILESS_MAIN(TestLocalPythonBackend)
#include "tst_localpythonbackend.moc"
