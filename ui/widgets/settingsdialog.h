#pragma once

#include "models/settingssources.h"

#include <QDialog>

#include <array>
#include <functional>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace loopscope {

// Shows the settings in effect, each with where it came from; a value given on the command
// line or in the config file is read-only with that reason. A change that restarts the proxy
// says so, with what it does to live sandboxes, while editing and asks before OK applies it.
// The caller persists (SettingsSources::commit) and applies the result.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    using Field = AppSettings::Field;
    // `sessionSandboxes`: live session sandboxes a restart would delete.
    SettingsDialog(const SettingsSources &sources, int sessionSandboxes, QWidget *parent = nullptr);

    // The edited values, locked ones as in effect.
    AppSettings settings() const;
    bool restartPending() const;

    // Asked before a restart-needing OK (the warning as text); true goes ahead. Default: a
    // QMessageBox; tests replace it.
    void setConfirm(std::function<bool(const QString &)> confirm) {
        m_confirm = std::move(confirm);
    }

    QSpinBox *portBox() const { return m_port; }
    QLineEdit *upstreamEdit() const { return m_upstream; }
    QSpinBox *retentionBox() const { return m_retention; }
    QSpinBox *maxLoopsBox() const { return m_maxLoops; }
    QComboBox *themeBox() const { return m_theme; }
    QWidget *editor(Field field) const { return m_editors[size_t(field)]; }
    // "command line (--port 0)", "saved setting", ...
    QLabel *sourceLabel(Field field) const { return m_sourceLabels[size_t(field)]; }
    QLabel *restartLabel() const { return m_restartNote; }
    QLabel *errorLabel() const { return m_error; }

public slots:
    void accept() override;

private:
    void updateRestartNote();

    SettingsSources m_sources;
    int m_sessionSandboxes;
    std::function<bool(const QString &)> m_confirm;
    QSpinBox *m_port;
    QLineEdit *m_upstream;
    QSpinBox *m_upstreamTimeout;
    QSpinBox *m_executionTimeout;
    QSpinBox *m_maxLoops;
    QSpinBox *m_poolSize;
    QSpinBox *m_retention;
    QComboBox *m_theme;
    std::array<QWidget *, AppSettings::kFieldCount> m_editors{};
    std::array<QLabel *, AppSettings::kFieldCount> m_sourceLabels{};
    QLabel *m_restartNote;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
};

} // namespace loopscope
