! Context annotations from Fortran: the module `perusetrace` over include/perusetrace/annotate.h,
! with Fortran strings (trailing blanks dropped) and integer or real values.
!
!   use perusetrace
!   integer :: phase
!   phase = perusetrace_attribute('mysolver', 'phase', PERUSETRACE_ATTR_DEFAULT)
!   call perusetrace_begin(phase, 'exchange')   ...   call perusetrace_end(phase)
!   call perusetrace_set(iteration, 3)          ! replaces the previous value
!   call perusetrace_region_begin('assemble')   ...   call perusetrace_region_end('assemble')
!
! Compile this file with the program (mpifort -c .../perusetrace/perusetrace.f90) and link
! libperusetrace (mpifort ... $(pkg-config --libs perusetrace)): Fortran has no weak references,
! so unlike the C header a program annotated from Fortran needs the library to link.
module perusetrace
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int32_t, c_int64_t, c_null_char
  implicit none
  private

  integer, parameter, public :: PERUSETRACE_ATTR_DEFAULT = 0
  integer, parameter, public :: PERUSETRACE_ATTR_THREAD_SCOPE = 0
  integer, parameter, public :: PERUSETRACE_ATTR_PROCESS_SCOPE = 1
  integer, parameter, public :: PERUSETRACE_ATTR_NESTED = 0
  integer, parameter, public :: PERUSETRACE_ATTR_AS_VALUE = 2

  public :: perusetrace_attribute, perusetrace_begin, perusetrace_end, perusetrace_set
  public :: perusetrace_region_begin, perusetrace_region_end

  ! The library's entry points (annotate.h); an attribute is a uint32_t, held in an INTEGER.
  interface
    function annotate_attribute(module, name, flags) result(attribute) &
        bind(C, name='perusetrace_annotate_attribute')
      import :: c_char, c_int, c_int32_t
      character(kind=c_char), intent(in) :: module(*), name(*)
      integer(c_int), value :: flags
      integer(c_int32_t) :: attribute
    end function annotate_attribute
    subroutine annotate_begin(attribute, value) bind(C, name='perusetrace_annotate_begin')
      import :: c_char, c_int32_t
      integer(c_int32_t), value :: attribute
      character(kind=c_char), intent(in) :: value(*)
    end subroutine annotate_begin
    subroutine annotate_end(attribute) bind(C, name='perusetrace_annotate_end')
      import :: c_int32_t
      integer(c_int32_t), value :: attribute
    end subroutine annotate_end
    subroutine annotate_set(attribute, value) bind(C, name='perusetrace_annotate_set')
      import :: c_char, c_int32_t
      integer(c_int32_t), value :: attribute
      character(kind=c_char), intent(in) :: value(*)
    end subroutine annotate_set
    subroutine annotate_set_int(attribute, value) bind(C, name='perusetrace_annotate_set_int')
      import :: c_int32_t, c_int64_t
      integer(c_int32_t), value :: attribute
      integer(c_int64_t), value :: value
    end subroutine annotate_set_int
    subroutine annotate_region_begin(name) bind(C, name='perusetrace_annotate_region_begin')
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine annotate_region_begin
    subroutine annotate_region_end(name) bind(C, name='perusetrace_annotate_region_end')
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine annotate_region_end
  end interface

  ! A value: a string, an integer (its decimal digits) or a real (as C's %g would print it).
  interface perusetrace_begin
    module procedure begin_string, begin_integer, begin_integer8, begin_real8
  end interface perusetrace_begin
  ! Replaces the value: a string as a region, an integer as a metric (annotate.h).
  interface perusetrace_set
    module procedure set_string, set_integer, set_integer8
  end interface perusetrace_set

contains

  function c_string(text) result(c)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len_trim(text) + 1) :: c
    c = trim(text) // c_null_char
  end function c_string

  integer function perusetrace_attribute(module, name, flags)
    character(len=*), intent(in) :: module, name
    integer, intent(in) :: flags
    perusetrace_attribute = int(annotate_attribute(c_string(module), c_string(name), &
                                                   int(flags, c_int)))
  end function perusetrace_attribute

  subroutine begin_string(attribute, value)
    integer, intent(in) :: attribute
    character(len=*), intent(in) :: value
    call annotate_begin(int(attribute, c_int32_t), c_string(value))
  end subroutine begin_string

  subroutine begin_integer(attribute, value)
    integer, intent(in) :: attribute, value
    call begin_integer8(attribute, int(value, c_int64_t))
  end subroutine begin_integer

  subroutine begin_integer8(attribute, value)
    integer, intent(in) :: attribute
    integer(c_int64_t), intent(in) :: value
    character(len=24) :: text
    write (text, '(i0)') value
    call annotate_begin(int(attribute, c_int32_t), c_string(text))
  end subroutine begin_integer8

  subroutine begin_real8(attribute, value)
    integer, intent(in) :: attribute
    double precision, intent(in) :: value
    character(len=32) :: text
    write (text, '(g0)') value
    call annotate_begin(int(attribute, c_int32_t), c_string(adjustl(text)))
  end subroutine begin_real8

  subroutine perusetrace_end(attribute)
    integer, intent(in) :: attribute
    call annotate_end(int(attribute, c_int32_t))
  end subroutine perusetrace_end

  subroutine set_string(attribute, value)
    integer, intent(in) :: attribute
    character(len=*), intent(in) :: value
    call annotate_set(int(attribute, c_int32_t), c_string(value))
  end subroutine set_string

  subroutine set_integer(attribute, value)
    integer, intent(in) :: attribute, value
    call annotate_set_int(int(attribute, c_int32_t), int(value, c_int64_t))
  end subroutine set_integer

  subroutine set_integer8(attribute, value)
    integer, intent(in) :: attribute
    integer(c_int64_t), intent(in) :: value
    call annotate_set_int(int(attribute, c_int32_t), value)
  end subroutine set_integer8

  subroutine perusetrace_region_begin(name)
    character(len=*), intent(in) :: name
    call annotate_region_begin(c_string(name))
  end subroutine perusetrace_region_begin

  subroutine perusetrace_region_end(name)
    character(len=*), intent(in) :: name
    call annotate_region_end(c_string(name))
  end subroutine perusetrace_region_end

end module perusetrace
