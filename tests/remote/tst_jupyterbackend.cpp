#include "jupyterserverprocess.h"
#include "sandbox/remote/jupyterbackend.h"
#include "support/futurewait.h"

#include <QSignalSpy>
#include <QTcpServer>
#include <QtTest>

using namespace loopscope;
using loopscope::awaitFuture;
using loopscope::test::JupyterServerProcess;

// Runs against a real Debian jupyter-server started (and stopped) by this test on a free
// loopback port with a random token.
class TestJupyterBackend : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();
    void cleanupTestCase();

    void stateIsKeptAcrossRunsAndDeleteEndsTheKernel();
    void stdoutAndStderrAreSeparated();
    void displayedPicturesBecomeImages();
    void liveOutputArrivesWhileTheCodeRuns();
    void exceptionFillsTheErrorFields();
    void resultsAppearInStdout_data();
    void resultsAppearInStdout();
    void runsOnOneKernelAreSerialised();
    void deleteThenRunFailsClearly();
    void timeoutInterruptsAndKeepsState();
    void timeoutIgnoringInterruptRestartsTheKernel();
    void cancelInterruptsTheRunAndKeepsState();
    void cancelIgnoringTheInterruptRestartsTheKernel();
    void crashedKernelIsAnInfrastructureError();
    void droppedSocketReconnectsAndKeepsOutput();
    void outputIsCapped();
    void badTokenIsUnauthorised();
    void unknownKernelNameIsReported();
    void kernelSelection_data();
    void kernelSelection();
    void unreachableServerFailsQuickly();
    void destroyingTheBackendSettlesRunningWork();

private:
    SandboxParams params(const QString &token = {}) const {
        return SandboxParams{QStringLiteral("jupyter"), token.isEmpty() ? m_server.token() : token,
                             m_server.baseUrl()};
    }
    SandboxHandle createKernel(JupyterBackend &backend) {
        const auto created = awaitFuture(backend.create(params()), 60000);
        if (!created.ok()) {
            qWarning() << "create failed:" << created.error;
            return {};
        }
        m_created.append(created.value);
        return created.value;
    }
    Outcome<ExecutionResult> run(JupyterBackend &backend, const SandboxHandle &h,
                                 const QString &code, int timeoutMs = 60000) {
        return awaitFuture(backend.run(h, code, params()), timeoutMs);
    }
    // A backend whose runs time out only after two minutes (only a cancel ends them sooner),
    // with one kernel holding `kept = 5`.
    struct Spinning {
        std::unique_ptr<JupyterBackend> backend;
        SandboxHandle kernel;
    };
    Spinning backendWithKernel() {
        JupyterBackend::Options options;
        options.channel.runTimeoutMs = 120000;
        Spinning made{std::make_unique<JupyterBackend>(options), {}};
        made.kernel = createKernel(*made.backend);
        if (!made.kernel.isValid() ||
            !run(*made.backend, made.kernel, QStringLiteral("kept = 5")).ok())
            made.kernel = {};
        return made;
    }
    // Starts `code`, cancels it once its live output shows `marker`, and returns the result.
    Outcome<ExecutionResult> cancelOnceItPrints(JupyterBackend &backend, const SandboxHandle &h,
                                                const QString &code, const QString &marker) {
        QString live;
        const CancellationToken cancel = Cancellation::create();
        auto running = backend.run(
            h, code, params(), [&live](const QString &, const QString &text) { live += text; },
            cancel);
        if (!QTest::qWaitFor([&] { return live.contains(marker); }, 60000))
            return Outcome<ExecutionResult>::failure(QStringLiteral("no ") + marker);
        cancel->cancel();
        return awaitFuture(running, 90000);
    }

    JupyterServerProcess m_server;
    QList<SandboxHandle> m_created;
};

void TestJupyterBackend::initTestCase() {
    if (!JupyterServerProcess::isInstalled())
        QFAIL("jupyter-server is not installed: run scripts/install-deps (Debian package "
              "jupyter-server, python3-ipykernel)");
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
}

void TestJupyterBackend::cleanup() {
    // Kernels a failed test left behind.
    JupyterBackend cleaner;
    for (const SandboxHandle &h : std::as_const(m_created))
        awaitFuture(cleaner.remove(h, params()), 30000);
    m_created.clear();
}

void TestJupyterBackend::cleanupTestCase() {
    QVERIFY2(m_server.stop(), "jupyter-server had to be killed");
    QTRY_VERIFY_WITH_TIMEOUT(m_server.kernelProcesses().isEmpty(), 20000);
}

void TestJupyterBackend::stateIsKeptAcrossRunsAndDeleteEndsTheKernel() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    QVERIFY(h.isValid());
    QCOMPARE(h.provider, QStringLiteral("jupyter"));
    QCOMPARE(h.details.value(QStringLiteral("apiBase")).toString(), m_server.baseUrl());

    const auto first = run(backend, h, QStringLiteral("x = 41\nimport math"));
    QVERIFY2(first.ok(), qPrintable(first.error));
    QCOMPARE(first.value.stdoutText, QString());
    QVERIFY(!first.value.error);
    QCOMPARE(first.value.executionCount, 1);

    const auto second = run(backend, h, QStringLiteral("print(x + 1, math.floor(2.5))"));
    QVERIFY2(second.ok(), qPrintable(second.error));
    QCOMPARE(second.value.stdoutText, QStringLiteral("42 2\n"));
    QCOMPARE(second.value.executionCount, 2);
    QVERIFY(second.value.durationMs > 0);

    QCOMPARE(m_server.kernelProcesses(h.id).size(), 1);
    const auto removed = awaitFuture(backend.remove(h, params()), 30000);
    QVERIFY2(removed.ok(), qPrintable(removed.error));
    QCOMPARE(removed.value, true);
    QTRY_VERIFY_WITH_TIMEOUT(m_server.kernelProcesses(h.id).isEmpty(), 20000);
}

void TestJupyterBackend::stdoutAndStderrAreSeparated() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    const auto ran =
        run(backend, h,
            QStringLiteral("import sys\nprint('out 1')\nprint('err ü', file=sys.stderr)\n"
                           "sys.stderr.flush()\nprint('out 2 😀')"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("out 1\nout 2 😀\n"));
    QCOMPARE(ran.value.stderrText, QStringLiteral("err ü\n"));
    QVERIFY(!ran.value.error);
}

void TestJupyterBackend::displayedPicturesBecomeImages() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    const auto ran = run(backend, h,
                         QStringLiteral("import io\nfrom PIL import Image as P\n"
                                        "from IPython.display import Image, display\n"
                                        "for w in (3, 5):\n    b = io.BytesIO()\n"
                                        "    P.new('RGB', (w, 2)).save(b, 'PNG')\n"
                                        "    display(Image(data=b.getvalue()))\nprint('shown')"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY2(!ran.value.error,
             qPrintable(ran.value.error ? ran.value.error->traceback : QString()));
    QCOMPARE(ran.value.images.size(), 2);
    QCOMPARE(ran.value.images.at(0).name, QStringLiteral("image-1.png"));
    QCOMPARE(ran.value.images.at(1).mimeType, QStringLiteral("image/png"));
    QVERIFY(ran.value.images.at(1).data.startsWith(QByteArray("\x89PNG", 4)));
    QVERIFY(ran.value.stdoutText.contains(QStringLiteral("shown")));
}

void TestJupyterBackend::liveOutputArrivesWhileTheCodeRuns() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    QVERIFY(h.isValid());
    QList<QStringList> chunks; // stream, text, whether the run had finished
    QFuture<Outcome<ExecutionResult>> future;
    future = backend.run(h,
                         QStringLiteral("import sys, time\n"
                                        "for i in range(3):\n"
                                        "    print(i, flush=True)\n"
                                        "    print('err', i, file=sys.stderr, flush=True)\n"
                                        "    time.sleep(0.5)\n"),
                         params(), [&](const QString &stream, const QString &text) {
                             chunks.append({stream, text,
                                            future.isFinished() ? QStringLiteral("finished")
                                                                : QStringLiteral("running")});
                         });
    QTRY_VERIFY_WITH_TIMEOUT(!chunks.isEmpty() || future.isFinished(), 60000);
    QVERIFY2(!chunks.isEmpty(), "the run finished before any live output arrived");
    const auto ran = awaitFuture(future, 60000);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QString liveOut;
    QString liveErr;
    for (const QStringList &chunk : std::as_const(chunks)) {
        QCOMPARE(chunk[2], QStringLiteral("running")); // every chunk before the result
        (chunk[0] == QLatin1String("stdout") ? liveOut : liveErr) += chunk[1];
    }
    // The first chunk came while the kernel was still sleeping in the loop: it holds "0" but not
    // the whole output.
    QVERIFY(chunks.first()[1] != ran.value.stdoutText);
    QCOMPARE(ran.value.stdoutText, QStringLiteral("0\n1\n2\n"));
    QCOMPARE(ran.value.stderrText, QStringLiteral("err 0\nerr 1\nerr 2\n"));
    QCOMPARE(liveOut, ran.value.stdoutText);
    QCOMPARE(liveErr, ran.value.stderrText);
}

void TestJupyterBackend::exceptionFillsTheErrorFields() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    const auto ran = run(backend, h, QStringLiteral("print('before')\n1/0"));
    QVERIFY2(ran.ok(), qPrintable(ran.error)); // user errors are results, not failures
    QCOMPARE(ran.value.stdoutText, QStringLiteral("before\n"));
    QVERIFY(ran.value.error);
    QCOMPARE(ran.value.error->name, QStringLiteral("ZeroDivisionError"));
    QCOMPARE(ran.value.error->value, QStringLiteral("division by zero"));
    QVERIFY2(ran.value.error->traceback.contains(QLatin1String("ZeroDivisionError")),
             qPrintable(ran.value.error->traceback));
    QVERIFY2(!ran.value.error->traceback.contains(QChar(0x1b)), "ANSI colour codes left in");
    QVERIFY(!ran.value.timedOut);
    // The kernel carries on.
    const auto after = run(backend, h, QStringLiteral("print('fine')"));
    QCOMPARE(after.value.stdoutText, QStringLiteral("fine\n"));
}

void TestJupyterBackend::resultsAppearInStdout_data() {
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("stdoutText");
    QTest::newRow("last expression") << QStringLiteral("1 + 1") << QStringLiteral("2\n");
    QTest::newRow("print then expression")
        << QStringLiteral("print('a')\n'b'") << QStringLiteral("a\n'b'\n");
    QTest::newRow("display()") << QStringLiteral("from IPython.display import display\n"
                                                 "display({'k': 1})\nNone")
                               << QStringLiteral("{'k': 1}\n");
    QTest::newRow("statement only") << QStringLiteral("y = 3") << QString();
}

void TestJupyterBackend::resultsAppearInStdout() {
    QFETCH(QString, code);
    QFETCH(QString, stdoutText);
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    const auto ran = run(backend, h, code);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, stdoutText);
}

void TestJupyterBackend::runsOnOneKernelAreSerialised() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    // Queued at once; each must see the one before it.
    auto a = backend.run(h, QStringLiteral("import time\ntime.sleep(0.3)\nn = 1"), params());
    auto b = backend.run(h, QStringLiteral("n += 1\nprint(n)"), params());
    auto c = backend.run(h, QStringLiteral("print(n * 10)"), params());
    const auto rc = awaitFuture(c, 60000);
    QVERIFY(a.isFinished() && b.isFinished());
    QVERIFY2(a.result().ok() && b.result().ok() && rc.ok(), qPrintable(rc.error));
    QCOMPARE(b.result().value.stdoutText, QStringLiteral("2\n"));
    QCOMPARE(rc.value.stdoutText, QStringLiteral("20\n"));
    QCOMPARE(rc.value.executionCount, 3);
}

void TestJupyterBackend::deleteThenRunFailsClearly() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    QVERIFY(run(backend, h, QStringLiteral("z = 1")).ok());
    QCOMPARE(awaitFuture(backend.remove(h, params()), 30000).value, true);
    const auto ran = run(backend, h, QStringLiteral("print(z)"));
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.contains(QStringLiteral("Jupyter kernel %1 not found").arg(h.id)),
             qPrintable(ran.error));
    // Deleting again is not an error, just nothing to delete.
    const auto again = awaitFuture(backend.remove(h, params()), 30000);
    QVERIFY2(again.ok(), qPrintable(again.error));
    QCOMPARE(again.value, false);
}

void TestJupyterBackend::timeoutInterruptsAndKeepsState() {
    JupyterBackend::Options options;
    options.channel.runTimeoutMs = 2000;
    JupyterBackend backend(options);
    QSignalSpy restarted(&backend, &JupyterBackend::kernelRestarted);
    const SandboxHandle h = createKernel(backend);
    QVERIFY(run(backend, h, QStringLiteral("x = 5")).ok());
    const auto ran =
        run(backend, h, QStringLiteral("print('spinning', flush=True)\nwhile True: pass"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(ran.value.timedOut);
    QVERIFY(ran.value.error);
    QCOMPARE(ran.value.error->name, QStringLiteral("TimeoutError"));
    QVERIFY2(ran.value.error->value.contains(QLatin1String("interrupted")),
             qPrintable(ran.value.error->value));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("spinning\n"));
    // Interrupted, not restarted: the variable survives.
    const auto after = run(backend, h, QStringLiteral("print(x)"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("5\n"));
    QVERIFY(!after.value.timedOut);
    QCOMPARE(restarted.size(), 0);
}

void TestJupyterBackend::timeoutIgnoringInterruptRestartsTheKernel() {
    JupyterBackend::Options options;
    // Long enough for a freshly restarted kernel to answer on a loaded 2-core machine: the
    // run after the restart below shares this timeout.
    options.channel.runTimeoutMs = 6000;
    options.channel.interruptGraceMs = 1500;
    JupyterBackend backend(options);
    QSignalSpy restarted(&backend, &JupyterBackend::kernelRestarted);
    const SandboxHandle h = createKernel(backend);
    QVERIFY(run(backend, h, QStringLiteral("kept = 1")).ok());
    const auto ran =
        run(backend, h,
            QStringLiteral("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                           "while True: pass"),
            120000);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(ran.value.timedOut);
    QCOMPARE(ran.value.error->name, QStringLiteral("TimeoutError"));
    QVERIFY2(ran.value.error->value.contains(QLatin1String("restarted")),
             qPrintable(ran.value.error->value));
    QCOMPARE(restarted.size(), 1);
    QCOMPARE(restarted[0][0].toString(), h.id);
    QCOMPARE(restarted[0][1].toString(), QStringLiteral("timeout"));
    // Usable again, with a fresh interpreter.
    const auto after = run(backend, h, QStringLiteral("print('alive')\nprint(kept)"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("alive\n"));
    QVERIFY(after.value.error);
    QCOMPARE(after.value.error->name, QStringLiteral("NameError"));
}

// The client went away: the kernel is interrupted at once (no timeout involved), the run ends
// with KeyboardInterrupt and its output so far, the kernel keeps its variables; a run queued
// behind it and cancelled never runs.
void TestJupyterBackend::cancelInterruptsTheRunAndKeepsState() {
    const Spinning s = backendWithKernel();
    QVERIFY(s.kernel.isValid());
    QSignalSpy restarted(s.backend.get(), &JupyterBackend::kernelRestarted);
    const CancellationToken cancelQueued = Cancellation::create();
    auto queued = QtFuture::makeReadyFuture(Outcome<ExecutionResult>{});
    // Queued behind the spinning run below, and cancelled while it waits there.
    QTimer::singleShot(0, [&] {
        queued = s.backend->run(s.kernel, QStringLiteral("ran = True"), params(), {}, cancelQueued);
        cancelQueued->cancel();
    });
    const auto ran = cancelOnceItPrints(
        *s.backend, s.kernel, QStringLiteral("print('spinning', flush=True)\nwhile True: pass"),
        QStringLiteral("spinning"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(!ran.value.timedOut);
    QVERIFY(ran.value.error);
    QCOMPARE(ran.value.error->name, QStringLiteral("KeyboardInterrupt"));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("spinning\n"));
    const auto dropped = awaitFuture(queued, 30000);
    QVERIFY(!dropped.ok());
    QCOMPARE(dropped.error, SandboxBackend::kRunCancelled);
    // Interrupted, not restarted: a restart (the grace ran out) would lose `kept`.
    QCOMPARE(restarted.size(), 0);
    const auto after = run(*s.backend, s.kernel, QStringLiteral("print(kept, 'ran' in globals())"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QVERIFY2(!after.value.error,
             qPrintable(after.value.error ? after.value.error->value : QString()));
    QCOMPARE(after.value.stdoutText, QStringLiteral("5 False\n"));
}

// Code that ignores the interrupt: after the channel's interrupt grace the kernel is
// restarted (the run stops; its state is lost, and the result says so).
void TestJupyterBackend::cancelIgnoringTheInterruptRestartsTheKernel() {
    const Spinning s = backendWithKernel();
    QVERIFY(s.kernel.isValid());
    QSignalSpy restarted(s.backend.get(), &JupyterBackend::kernelRestarted);
    const auto ran = cancelOnceItPrints(
        *s.backend, s.kernel,
        QStringLiteral("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                       "print('stubborn', flush=True)\nwhile True: pass"),
        QStringLiteral("stubborn"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(!ran.value.timedOut);
    QVERIFY(ran.value.error);
    QCOMPARE(ran.value.error->name, QStringLiteral("KeyboardInterrupt"));
    QVERIFY2(ran.value.error->value.contains(QLatin1String("restarted")),
             qPrintable(ran.value.error->value));
    QCOMPARE(restarted.size(), 1);
    QCOMPARE(restarted[0][1].toString(), QStringLiteral("cancelled"));
    const auto after =
        run(*s.backend, s.kernel, QStringLiteral("print('alive')\nprint(kept)"), 120000);
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("alive\n"));
    QCOMPARE(after.value.error->name, QStringLiteral("NameError"));
}

void TestJupyterBackend::crashedKernelIsAnInfrastructureError() {
    JupyterBackend backend;
    QSignalSpy restarted(&backend, &JupyterBackend::kernelRestarted);
    const SandboxHandle h = createKernel(backend);
    const auto ran = run(backend, h, QStringLiteral("import os\nos._exit(1)"));
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.contains(QLatin1String("died")), qPrintable(ran.error));
    QVERIFY(ran.error.contains(h.id));
    QCOMPARE(restarted.size(), 1);
    QCOMPARE(restarted[0][1].toString(), QStringLiteral("died"));
    // The server restarted it; the sandbox works again.
    const auto after = run(backend, h, QStringLiteral("print('back')"));
    QVERIFY2(after.ok(), qPrintable(after.error));
    QCOMPARE(after.value.stdoutText, QStringLiteral("back\n"));
}

void TestJupyterBackend::droppedSocketReconnectsAndKeepsOutput() {
    JupyterBackend backend;
    const SandboxHandle h = createKernel(backend);
    QVERIFY(run(backend, h, QStringLiteral("pass")).ok());
    bool dropped = false;
    connect(&backend, &JupyterBackend::outputReceived, this,
            [&](const QString &kernelId, const QString &, const QString &text) {
                if (!dropped && text.contains(QLatin1String("first")))
                    dropped = backend.dropConnection(kernelId);
            });
    const auto ran = run(backend, h,
                         QStringLiteral("import time\nprint('first', flush=True)\n"
                                        "time.sleep(2)\nprint('second')"));
    QVERIFY(dropped);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    // 'second' was printed while the socket was down: the server buffered and replayed it.
    QCOMPARE(ran.value.stdoutText, QStringLiteral("first\nsecond\n"));
    QVERIFY(!ran.value.timedOut);
}

void TestJupyterBackend::outputIsCapped() {
    JupyterBackend::Options options;
    options.channel.outputCapBytes = 1000;
    JupyterBackend backend(options);
    const SandboxHandle h = createKernel(backend);
    const auto ran = run(backend, h, QStringLiteral("print('x' * 5000)\nprint('y' * 10)"));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(ran.value.stdoutTruncated);
    QVERIFY(!ran.value.stderrTruncated);
    // Exactly what was kept of what the program wrote; the cut is a note for the model.
    QCOMPARE(ran.value.stdoutText, QString(1000, QLatin1Char('x')));
    QCOMPARE(ran.value.notes,
             QStringList{QStringLiteral("[loopscope] stdout truncated at 1000 bytes; the rest was "
                                        "not kept")});
}

void TestJupyterBackend::badTokenIsUnauthorised() {
    JupyterBackend backend;
    const QString bad = QStringLiteral("definitely-wrong-token-QRST");
    const auto created = awaitFuture(backend.create(params(bad)), 30000);
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(QLatin1String("unauthorised")), qPrintable(created.error));
    QVERIFY2(created.error.contains(QStringLiteral("\u2026QRST")), qPrintable(created.error));
    QVERIFY(!created.error.contains(QLatin1String("definitely-wrong")));

    const SandboxSelfTest badProbe = awaitFuture(backend.probe(params(bad)), 30000);
    QVERIFY(!badProbe.available);
    QVERIFY2(badProbe.problems.value(0).contains(QLatin1String("unauthorised")),
             qPrintable(badProbe.problems.value(0)));
    QCOMPARE(backend.selfTest().available, false);

    const SandboxSelfTest goodProbe = awaitFuture(backend.probe(params()), 30000);
    QVERIFY2(goodProbe.available, qPrintable(goodProbe.problems.join(QLatin1Char('\n'))));
    QVERIFY(goodProbe.problems.isEmpty());
    QCOMPARE(backend.selfTest().available, true);

    // A kernel created with the right token refuses a run with a wrong one.
    const SandboxHandle h = createKernel(backend);
    const auto ran = awaitFuture(backend.run(h, QStringLiteral("1"), params(bad)), 30000);
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.contains(QLatin1String("unauthorised")), qPrintable(ran.error));
}

void TestJupyterBackend::unknownKernelNameIsReported() {
    JupyterBackend::Options options;
    options.kernelName = QStringLiteral("no-such-kernel");
    JupyterBackend backend(options);
    const auto created = awaitFuture(backend.create(params()), 30000);
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(QLatin1String("'no-such-kernel'")), qPrintable(created.error));
    const SandboxSelfTest probed = awaitFuture(backend.probe(params()), 30000);
    QVERIFY(!probed.available);
    QVERIFY2(probed.problems.value(0).contains(QLatin1String("offers no 'no-such-kernel' kernel")),
             qPrintable(probed.problems.value(0)));
    QVERIFY(probed.problems.value(0).contains(QLatin1String("python3")));
}

void TestJupyterBackend::kernelSelection_data() {
    QTest::addColumn<QString>("suffix"); // appended to api_base
    QTest::addColumn<QString>("kernel"); // expected kernel name; empty = creation must fail
    QTest::newRow("server default") << QString() << QStringLiteral("python3");
    QTest::newRow("kernel_name on api_base")
        << QStringLiteral("/?kernel_name=python3") << QStringLiteral("python3");
    QTest::newRow("unknown kernel_name") << QStringLiteral("?kernel_name=nope") << QString();
}

void TestJupyterBackend::kernelSelection() {
    QFETCH(QString, suffix);
    QFETCH(QString, kernel);
    JupyterBackend backend;
    SandboxParams p = params();
    p.apiBase += suffix;
    const SandboxSelfTest probed = awaitFuture(backend.probe(p), 30000);
    QCOMPARE(probed.available, !kernel.isEmpty());
    const auto created = awaitFuture(backend.create(p), 60000);
    if (kernel.isEmpty()) {
        QVERIFY(!created.ok());
        QVERIFY2(created.error.contains(QLatin1String("'nope'")), qPrintable(created.error));
        QVERIFY2(probed.problems.value(0).contains(QLatin1String("offers no 'nope' kernel")),
                 qPrintable(probed.problems.value(0)));
        return;
    }
    QVERIFY2(created.ok(), qPrintable(created.error));
    m_created.append(created.value);
    QCOMPARE(created.value.details.value(QStringLiteral("kernelName")).toString(), kernel);
    QCOMPARE(created.value.details.value(QStringLiteral("apiBase")).toString(), m_server.baseUrl());
    const auto ran =
        awaitFuture(backend.run(created.value, QStringLiteral("print(6 * 7)"), p), 60000);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("42\n"));
}

void TestJupyterBackend::unreachableServerFailsQuickly() {
    quint16 closedPort = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        closedPort = probe.serverPort();
    }
    const SandboxParams dead{QStringLiteral("jupyter"), QStringLiteral("tok"),
                             QStringLiteral("http://127.0.0.1:%1").arg(closedPort)};
    JupyterBackend backend;
    const auto created = awaitFuture(backend.create(dead), 10000);
    QVERIFY(!created.ok());
    QVERIFY2(
        created.error.startsWith(
            QStringLiteral("cannot reach Jupyter server at http://127.0.0.1:%1").arg(closedPort)),
        qPrintable(created.error));
    QVERIFY2(created.error.contains(QLatin1String("refused"), Qt::CaseInsensitive),
             qPrintable(created.error));
    const SandboxSelfTest probed = awaitFuture(backend.probe(dead), 10000);
    QVERIFY(!probed.available);
    QVERIFY(probed.problems.value(0).startsWith(QLatin1String("cannot reach Jupyter server")));
    // A run on a kernel of an unreachable server also says so.
    SandboxHandle ghost{
        QStringLiteral("00000000-0000-0000-0000-000000000000"), QStringLiteral("jupyter"), {}};
    const auto ran = awaitFuture(backend.run(ghost, QStringLiteral("1"), dead), 10000);
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.startsWith(QLatin1String("cannot reach Jupyter server")),
             qPrintable(ran.error));
}

void TestJupyterBackend::destroyingTheBackendSettlesRunningWork() {
    auto backend = std::make_unique<JupyterBackend>();
    const SandboxHandle h = createKernel(*backend);
    QVERIFY(h.isValid());
    bool started = false;
    connect(backend.get(), &JupyterBackend::outputReceived, this,
            [&started](const QString &, const QString &, const QString &) { started = true; });
    const auto running = backend->run(
        h, QStringLiteral("import time\nprint('go', flush=True)\ntime.sleep(30)"), params());
    const auto queued = backend->run(h, QStringLiteral("print('never')"), params());
    QTRY_VERIFY_WITH_TIMEOUT(started, 60000);
    const auto creating = backend->create(params()); // in flight on the network
    backend.reset();
    for (const auto &future : {running, queued}) {
        QVERIFY(future.isFinished());
        QVERIFY(!future.isCanceled());
        QVERIFY(!future.result().ok());
    }
    QVERIFY(creating.isFinished());
    QVERIFY(!creating.isCanceled());
    if (creating.result().ok()) // the server was faster than the abort
        m_created.append(creating.result().value);
}

QTEST_GUILESS_MAIN(TestJupyterBackend)
#include "tst_jupyterbackend.moc"
