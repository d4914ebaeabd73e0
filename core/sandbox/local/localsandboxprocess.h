#pragma once

#include "common/outcome.h"
#include "sandbox/local/localsandboxframecodec.h"
#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/sandboxbackend.h"
#include "sandbox/sandboxtypes.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QPromise>
#include <QStringDecoder>
#include <QTimer>

#include <memory>
#include <optional>
#include <utility>

class QLocalSocket;
class QProcess;
class QSocketNotifier;
class QTemporaryDir;

namespace loopscope {

class LocalSandboxZygote;

// One sandbox interpreter: bubblewrap around `/usr/bin/python3 -I` running
// resources/sandbox_driver.py, spoken to with LocalSandboxFrameCodec frames. Runs one piece of
// code at a time. Every process of the sandbox dies with it: bwrap is the leader of its own
// process group and gets SIGKILL if this process dies (PR_SET_PDEATHSIG), and killing bwrap kills
// the sandbox's PID namespace. When the app runs as root the whole tree runs as
// LocalSandboxOptions::sandboxUid. With a LocalSandboxZygote the interpreter is forked by the
// zygote instead (same isolation, see there): frames go over a socket, and the zygote reports
// the sandbox's end on a lifeline and kills it when told to. Lives on (and must be used from) the
// backend's thread (a pooled one may be made and started on the backend's spawn thread and then
// moved there: its timers are children, so they move with it).
class LocalSandboxProcess : public QObject {
    Q_OBJECT
public:
    // Marks every descriptor from 3 up close-on-exec except keepFd (cleared, so it is
    // inherited): close_range when the kernel has it, else (or when useCloseRange is false, for
    // tests) one fcntl per descriptor below fdLimit. Async-signal-safe. True if the fallback ran.
    static bool markInheritedCloseOnExec(int keepFd, int fdLimit, bool useCloseRange);

    enum class State { NotStarted, Starting, Ready, Running, Exited };
    Q_ENUM(State)

    // `zygote` (isolated only; may be null) forks the interpreter instead of a bwrap of its own.
    LocalSandboxProcess(const LocalSandboxOptions &options, bool isolated,
                        LocalSandboxZygote *zygote = nullptr, QObject *parent = nullptr);
    // Kills and reaps the process tree (blocking for at most a few ms: SIGKILL cannot be ignored).
    ~LocalSandboxProcess() override;

    // `nice` > 0 starts the whole tree at that lower CPU priority (see setNice()).
    void start(int nice = 0);
    State state() const { return m_state; }
    bool isAlive() const { return m_state != State::NotStarted && m_state != State::Exited; }
    bool isIsolated() const { return m_isolated; }
    bool isForked() const { return m_forked; }
    // Host pid of the outer bwrap (or unisolated python), or of the sandbox's PID-namespace init
    // when forked by the zygote (known once it reported, at the latest when the interpreter is
    // ready).
    qint64 processId() const;
    // Host pid of the sandbox's PID-namespace init (bwrap's inner process, from --info-fd), 0 if
    // not known (unisolated, not reported yet) or no longer the outer bwrap's child.
    qint64 namespaceInitPid();
    // Sets every process and thread of the tree to `nice` (forked: of the sandbox's process
    // group); lowering it (raising the priority) works only where the system allows it. Returns
    // whether every task took it.
    bool setNice(int nice);
    // Why the interpreter is gone (empty while it lives).
    QString exitReason() const { return m_exitReason; }
    // Whether the driver ever reported ready (a start that failed did not).
    bool becameReady() const { return m_becameReady; }

    // Finishes with true once the driver reports ready, or with an error if it dies first.
    QFuture<Outcome<bool>> whenReady() const { return m_ready.future(); }

    // Blocks until ready or failed, without an event loop (selfTest's probe). Returns ready.
    // Only for an interpreter of its own (a bwrap, or unisolated): a forked one is not ready
    // without the event loop, which carries the zygote's reports.
    bool waitForReady(int timeoutMs);

    // Runs `code`; requires state() == Ready. Finishes with the driver's result; with a
    // TimeoutError result after `timeoutMs` (the tree is killed and this process is then Exited);
    // with an InterpreterExited result when user code kills its own interpreter; or with an
    // error when kill() ends the run. `onOutput` gets what the run prints while it runs, as the
    // driver sends it (coalesced and capped there, LocalSandboxOptions::liveOutput*), always
    // before the future finishes.
    QFuture<Outcome<ExecutionResult>> execute(const QString &code, int timeoutMs,
                                              const SandboxOutputSink &onOutput = {});

    // A file operation on /mnt/data (the driver's "fs" op: list / read / write / delete). Frames
    // are answered in order, so it may be sent while a run is in flight: the driver serves it
    // after that run. Finishes with the driver's reply header and data (a read's bytes), or an
    // error when the driver refuses or the interpreter goes away. A driver that has not answered
    // within LocalSandboxOptions::fileTimeoutMs of being free to (ready, no run ahead) is
    // killed, and the request fails saying so.
    struct FileReply {
        QJsonObject header;
        QByteArray data;
    };
    QFuture<Outcome<FileReply>> fileRequest(const QJsonObject &request,
                                            const QByteArray &payload = {});

    // Kills the whole tree; exited() follows once it is reaped. Idempotent.
    void kill();
    // Stops the run in flight (the client went away) while keeping the interpreter: SIGINT to
    // the interpreter (again halfway through `graceMs`), which the driver turns into a
    // KeyboardInterrupt in the user's code; the
    // run then finishes as usual, with that error and its output so far. Code that has not
    // stopped within `graceMs` (it catches the exception, or hangs in C) loses the interpreter:
    // the run finishes with KeyboardInterrupt, the output of its last partial frame, and a note
    // that the next run starts fresh (as on a timeout). No-op without a run in flight.
    void interrupt(int graceMs);
    // Host pid of the interpreter (the python process that runs the code), 0 if not known.
    qint64 interpreterPid();

    // A descriptor of the sandbox's /mnt/data tmpfs, opened (through /proc) once it was ready,
    // or -1. It keeps that tmpfs readable after the sandbox is gone, so the caller can carry the
    // files into the next interpreter of the same container; the caller owns it (and must close
    // it) after this call. Closed with this object otherwise.
    int takeDataDir() { return std::exchange(m_dataDirFd, -1); }

signals:
    void exited();

private:
    enum class KillReason {
        None,
        Requested,
        Timeout,
        StartTimeout,
        Protocol,
        FileTimeout,
        Interrupted
    };

    void startForked(int nice);
    QJsonObject driverConfig(const QString &workDir, const QJsonArray &sitePackages) const;
    bool hasTransport() const { return m_process || m_channel; }
    void sendToDriver(const QByteArray &bytes);
    void flushToDriver();
    void onStdout();
    void onStderr();
    void onLifeline();
    // Takes what the lifeline holds now (the init's pid, the zygote's report); true once closed.
    bool readLifeline();
    void finishForked();
    void onFinished(int exitCode, bool crashed);
    void onFailedToStart();
    void handleFrame(const QByteArray &payload);
    void finishRun(const QJsonObject &header);
    void finishFileRequest(const QJsonObject &header, const QByteArray &data);
    void armFileTimer();
    void openDataDir();
    static qsizetype expectedRawFrames(const QJsonObject &header);
    void applyOutput(const QJsonObject &header, ExecutionResult &result);
    void deliverLiveOutput(const QJsonObject &header);
    void killTree(KillReason reason);
    bool signalInterpreter(int sig);
    void readInfo();
    void markExited(const QString &reason, bool notify = true);
    void failEarly(const QString &reason);
    QString describeExit(int exitCode, bool crashed) const;
    qint64 liveCapBytes() const;

    LocalSandboxOptions m_options;
    bool m_isolated;
    State m_state = State::NotStarted;
    QProcess *m_process = nullptr; // child of this (bwrap or unisolated python)
    // Forked mode: the backend's zygote (which may go first: the backend falls back or shuts down).
    QPointer<LocalSandboxZygote> m_zygote;
    bool m_forked = false;
    QLocalSocket *m_channel = nullptr;     // forked mode: the driver's frames; child
    int m_lifelineFd = -1;                 // forked mode: see LocalSandboxZygote
    QSocketNotifier *m_lifeline = nullptr; // child of this
    QByteArray m_lifelineData;
    std::unique_ptr<QTemporaryDir> m_hostWorkDir; // unisolated mode only
    LocalSandboxFrameCodec m_codec;
    // Bytes for the driver not yet handed to the transport, oldest first: they go over in
    // chunks as it drains, so an upload is never copied whole into its write buffer (QLocalSocket
    // copies what it is given; the queue only holds references).
    QList<QByteArray> m_outgoing;
    qsizetype m_outgoingOffset = 0; // into m_outgoing.first()
    bool m_flushing = false;
    QByteArray m_stderrTail;
    QString m_exitReason;
    bool m_becameReady = false;
    QString m_earlyFailure;
    KillReason m_killReason = KillReason::None;
    qint64 m_pid = 0;
    int m_infoFd = -1; // read end of bwrap's --info-fd pipe
    QByteArray m_info;
    qint64 m_nsInitPid = 0;
    QTimer m_reapTimer{this}; // after killing the namespace init: the outer bwrap should follow

    QPromise<Outcome<bool>> m_ready;
    QTimer m_startTimer{this};

    std::unique_ptr<QPromise<Outcome<ExecutionResult>>> m_run;
    std::optional<QJsonObject> m_pendingHeader; // result or partial, before its output frames
    QList<QByteArray> m_pendingStreams;
    std::optional<ExecutionResult> m_partial; // output so far of a run about to time out
    qint64 m_runId = 0;
    // File requests in flight, oldest first (the driver answers them in order).
    QList<std::pair<qint64, std::shared_ptr<QPromise<Outcome<FileReply>>>>> m_fileRequests;
    qint64 m_fileRequestId = 0;
    QTimer m_fileTimer{this};         // the oldest file request the driver is free to serve
    int m_dataDirFd = -1;             // see takeDataDir()
    SandboxOutputSink m_liveSink;     // of the run in flight
    QStringDecoder m_liveDecoders[2]; // chunks may end inside a UTF-8 sequence
    int m_runTimeoutMs = 0;
    QElapsedTimer m_runClock;
    QTimer m_runTimer{this};
    QTimer m_interruptTimer{this}; // an interrupted run that has not stopped yet
    int m_interruptRetry = 0;      // ms left after the second SIGINT, 0 once it was sent
};

} // namespace loopscope
