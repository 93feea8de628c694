/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package telemetry

import (
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// LogLevel makes the level of the logger opts builds changeable while the manager runs, and
// returns it for Setup to serve at LogLevelPath. Call it after the flags are parsed
// (--zap-log-level) and before zap.New.
func LogLevel(opts *zap.Options) uzap.AtomicLevel {
	level := uzap.NewAtomicLevelAt(zapcore.InfoLevel)
	if opts.Development {
		level.SetLevel(zapcore.DebugLevel)
	}
	switch l := opts.Level.(type) {
	case nil:
	case zapcore.Level:
		level.SetLevel(l)
	case uzap.AtomicLevel:
		return l
	default:
		level.SetLevel(zapcore.LevelOf(l))
	}
	opts.Level = level
	return level
}
