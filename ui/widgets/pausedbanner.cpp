#include "widgets/pausedbanner.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace loopscope {

namespace {
const QString kDefaultDeny = QStringLiteral("User declined to run this code.");
}

PausedBanner::PausedBanner(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_editor(new QPlainTextEdit(this))
    , m_run(new QPushButton(tr("Run"), this))
    , m_runEdited(new QPushButton(tr("Run edited"), this))
    , m_deny(new QPushButton(tr("Deny…"), this))
    , m_abort(new QPushButton(tr("Abort"), this))
    , m_autoApprove(new QPushButton(tr("Auto-approve this session"), this)) {
    setObjectName(QStringLiteral("pausedBanner"));
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, QColor(0xff, 0xf3, 0xcd)); // a warning amber: the loop waits
    p.setColor(QPalette::WindowText, QColor(0x5c, 0x40, 0x00));
    setPalette(p);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_editor->setObjectName(QStringLiteral("pausedCode"));
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setTabChangesFocus(true);
    m_editor->setMinimumHeight(80);
    m_run->setToolTip(tr("Run the code as the model wrote it (Ctrl+Enter)"));
    m_runEdited->setToolTip(tr("Run the code as edited here"));
    m_deny->setToolTip(tr("Do not run it; the model gets a message instead (Ctrl+Backspace)"));
    m_abort->setToolTip(tr("End the request: the client gets 409 aborted_by_user"));

    auto *buttons = new QHBoxLayout;
    for (QPushButton *b : {m_run, m_runEdited, m_deny, m_abort})
        buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(m_autoApprove);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_editor, 1);
    layout->addLayout(buttons);

    connect(m_run, &QPushButton::clicked, this, &PausedBanner::run);
    connect(m_runEdited, &QPushButton::clicked, this, &PausedBanner::runEdited);
    connect(m_deny, &QPushButton::clicked, this, &PausedBanner::deny);
    connect(m_abort, &QPushButton::clicked, this, &PausedBanner::abort);
    connect(m_autoApprove, &QPushButton::clicked, this, &PausedBanner::autoApproveSession);
    for (const QKeySequence &keys :
         {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)}) {
        auto *shortcut = new QShortcut(keys, this, this, &PausedBanner::run);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
    }
    auto *denyKey =
        new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Backspace), this, this, &PausedBanner::deny);
    denyKey->setContext(Qt::WidgetWithChildrenShortcut);
    // The editor would take Ctrl+Backspace (delete word) before any shortcut sees it.
    m_editor->installEventFilter(this);
    connect(m_editor, &QPlainTextEdit::textChanged, this, [this] {
        const QJsonObject pause = current();
        m_runEdited->setEnabled(!pause.isEmpty() &&
                                m_editor->toPlainText() !=
                                    pause.value(QStringLiteral("code")).toString());
    });
    askDenyMessage = [this](const QString &defaultMessage, bool *ok) {
        return QInputDialog::getText(this, tr("Deny"), tr("Message the model gets instead:"),
                                     QLineEdit::Normal, defaultMessage, ok);
    };
    showCurrent();
}

void PausedBanner::onPaused(const QJsonObject &pause) {
    m_pending.append(pause);
    if (m_pending.size() == 1)
        showCurrent();
    else
        updateTitle(); // only the waiting count changes: keep the person's edits
    emit pendingChanged(int(m_pending.size()));
}

void PausedBanner::onResumed(const QString &pauseId) {
    for (qsizetype i = 0; i < m_pending.size(); ++i) {
        if (m_pending.at(i).value(QStringLiteral("id")).toString() == pauseId) {
            const bool shown = i == 0;
            m_pending.removeAt(i);
            if (shown)
                showCurrent();
            emit pendingChanged(int(m_pending.size()));
            return;
        }
    }
}

bool PausedBanner::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_editor &&
        (event->type() == QEvent::KeyPress || event->type() == QEvent::ShortcutOverride)) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if (key->modifiers() == Qt::ControlModifier) {
            const bool runKey = key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter;
            const bool denyKey = key->key() == Qt::Key_Backspace;
            if (runKey || denyKey) {
                event->accept();
                if (event->type() == QEvent::KeyPress) {
                    if (runKey)
                        run();
                    else
                        deny();
                }
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

QJsonObject PausedBanner::current() const {
    return m_pending.isEmpty() ? QJsonObject() : m_pending.first();
}

void PausedBanner::showCurrent() {
    const QJsonObject pause = current();
    setVisible(!pause.isEmpty());
    if (pause.isEmpty())
        return;
    updateTitle();
    const QString kind = pause.value(QStringLiteral("kind")).toString();
    const QString text =
        kind == QLatin1String("code")
            ? pause.value(QStringLiteral("code")).toString()
            : QString::fromUtf8(QJsonDocument(pause.value(QStringLiteral("body")).toObject())
                                    .toJson(QJsonDocument::Indented));
    const QSignalBlocker block(m_editor);
    m_editor->setPlainText(text);
    m_runEdited->setEnabled(false);
    m_deny->setEnabled(kind == QLatin1String("code"));
    m_autoApprove->setEnabled(kind == QLatin1String("code"));
}

void PausedBanner::updateTitle() {
    const QJsonObject pause = current();
    const QString kind = pause.value(QStringLiteral("kind")).toString();
    QString title = tr("Paused before %1 — flow %2")
                        .arg(kind == QLatin1String("code") ? tr("the code runs")
                             : kind == QLatin1String("upstream_request")
                                 ? tr("the model call")
                                 : tr("Loopscope acts on the model's answer"),
                             pause.value(QStringLiteral("flow_id")).toString());
    if (m_pending.size() > 1)
        title += tr(" (%n more waiting)", nullptr, int(m_pending.size() - 1));
    m_title->setText(title);
}

void PausedBanner::resolve(const QJsonObject &decision) {
    const QJsonObject pause = current();
    if (pause.isEmpty())
        return;
    emit resolveRequested(pause.value(QStringLiteral("id")).toString(), decision);
}

void PausedBanner::run() {
    resolve({{QStringLiteral("action"), QStringLiteral("continue")}});
}

void PausedBanner::runEdited() {
    const QJsonObject pause = current();
    if (pause.isEmpty())
        return;
    QJsonObject decision{{QStringLiteral("action"), QStringLiteral("continue")}};
    if (pause.value(QStringLiteral("kind")).toString() == QLatin1String("code")) {
        decision.insert(QStringLiteral("code"), m_editor->toPlainText());
    } else {
        const QJsonDocument body = QJsonDocument::fromJson(m_editor->toPlainText().toUtf8());
        if (!body.isObject()) {
            m_title->setText(tr("The edited body is not a JSON object."));
            return;
        }
        decision.insert(QStringLiteral("body"), body.object());
    }
    resolve(decision);
}

void PausedBanner::deny() {
    if (current().value(QStringLiteral("kind")).toString() != QLatin1String("code"))
        return;
    bool ok = false;
    const QString message = askDenyMessage ? askDenyMessage(kDefaultDeny, &ok) : kDefaultDeny;
    if (askDenyMessage && !ok)
        return;
    resolve({{QStringLiteral("action"), QStringLiteral("deny")},
             {QStringLiteral("message"), message.isEmpty() ? kDefaultDeny : message}});
}

void PausedBanner::abort() {
    resolve({{QStringLiteral("action"), QStringLiteral("abort")}});
}

void PausedBanner::autoApproveSession() {
    const QJsonObject pause = current();
    if (pause.isEmpty())
        return;
    const QString session = pause.value(QStringLiteral("session_id")).toString();
    emit autoApproveRequested(session.isEmpty() ? pause.value(QStringLiteral("flow_id")).toString()
                                                : session);
    run();
}

} // namespace loopscope
