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

package v2

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	shipv1 "example.com/harbor/api/v1"
)

// ConvertTo converts this v2 Frigate to the hub version of Frigate (example.com/harbor/api/v1).
func (src *Frigate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*shipv1.Frigate)
	dst.ObjectMeta = src.ObjectMeta

	// TODO(user): copy the spec and status fields to dst, converting those that differ between versions,
	// e.g. dst.Spec.Foo = src.Spec.Foo. Information dst cannot hold can be kept in an annotation.

	return nil
}

// ConvertFrom fills this v2 Frigate from the hub version of Frigate (example.com/harbor/api/v1).
func (dst *Frigate) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*shipv1.Frigate)
	dst.ObjectMeta = src.ObjectMeta

	// TODO(user): copy the spec and status fields from src, the reverse of ConvertTo.

	return nil
}
